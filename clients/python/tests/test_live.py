"""The client against the real server (started by test/clients/python-client.test.ts, which passes its address and
credentials in the environment): the same calls as the TypeScript client's live test."""
from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx
import pytest

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from svc_extension_api import CLIENT_ASSERTION_TYPE, Credentials, ExtensionApiError, ExtensionClient, KeyCredentials, RetryOptions, SecretCredentials
from svc_extension_api.assertion import private_key
from svc_extension_api.generated.schema import ReferralCreateRequest

ENV = os.environ
pytestmark = pytest.mark.skipif("SVC_TEST_BASE_URL" not in ENV, reason="no server: run through test/clients/python-client.test.ts")
BASE = ENV.get("SVC_TEST_BASE_URL", "")
CREDENTIALS = SecretCredentials(ENV.get("SVC_TEST_CLIENT_ID", ""), ENV.get("SVC_TEST_CLIENT_SECRET", ""), "phi")
LIMITED = SecretCredentials(ENV.get("SVC_TEST_LIMITED_CLIENT_ID", ""), ENV.get("SVC_TEST_LIMITED_CLIENT_SECRET", ""), "no_phi")
TOKEN_PATH = "/api/v1/oauth/token"
# An integration of the same agency with two registered keys and no secret (private_key_jwt).
BY_RSA_PEM = KeyCredentials(ENV.get("SVC_TEST_KEY_CLIENT_ID", ""), ENV.get("SVC_TEST_RSA_PRIVATE_PEM", "").encode(), ENV.get("SVC_TEST_RSA_KID", ""), "phi") if BASE else None
BY_EC_JWK = KeyCredentials(ENV.get("SVC_TEST_KEY_CLIENT_ID", ""), json.loads(ENV.get("SVC_TEST_EC_PRIVATE_JWK", "{}")), ENV.get("SVC_TEST_EC_KID", ""), "phi", alg="ES384") if BASE else None
CREDENTIAL_KINDS = pytest.mark.parametrize("credentials", [CREDENTIALS, BY_RSA_PEM, BY_EC_JWK], ids=["secret", "rsa pem (RS384)", "ec p-384 private jwk (ES384)"])


@dataclass
class Sent:
    method: str
    path: str
    key: str | None
    authorization: str | None
    body: bytes
    status: int | None = None
    retry_after: str | None = None
    replayed: str | None = None


class RecordingTransport(httpx.BaseTransport):
    """Records every request; `drop` loses the answer of the requests it picks after the server handled them."""

    def __init__(self, drop: Callable[[Sent], bool] = lambda sent: False) -> None:
        self.sent: list[Sent] = []
        self._inner = httpx.HTTPTransport()
        self._drop = drop

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        entry = Sent(request.method, request.url.path, request.headers.get("idempotency-key"), request.headers.get("authorization"), request.read())
        self.sent.append(entry)
        response = self._inner.handle_request(request)
        response.read()
        entry.status, entry.retry_after, entry.replayed = response.status_code, response.headers.get("retry-after"), response.headers.get("idempotent-replayed")
        if self._drop(entry):
            entry.status = None
            raise httpx.ConnectError("the test dropped the answer", request=request)
        return response

    def to(self, path: str) -> list[Sent]:
        return [s for s in self.sent if s.path == path]


def until(what: str, check: Callable[[], bool], timeout_seconds: float = 20) -> None:
    """Waits for `check` to hold, asking again every 20 ms; past the deadline it fails, naming `what`."""
    deadline = time.time() + timeout_seconds
    while not check():
        assert time.time() < deadline, f"timed out waiting until {what}"
        time.sleep(0.02)


def referral(last: str) -> ReferralCreateRequest:
    return {"service_line": "home_health", "patient_name": f"Client {last}", "patient_zip_code": "02108"}


@pytest.fixture(scope="module", autouse=True)
def charts() -> None:
    """Charts to page through: each accepted referral of a new name opens one."""
    with ExtensionClient(BASE, CREDENTIALS) as setup:
        for last in ["Abbott", "Baker", "Chen", "Diaz", "Evans"]:
            setup.create_referral(referral(last))


@CREDENTIAL_KINDS
def test_one_token_shared_until_shortly_before_expiry_then_renewed(credentials: Credentials) -> None:
    clock = [time.time()]
    transport = RecordingTransport()
    client = ExtensionClient(BASE, credentials, transport=transport, now=lambda: clock[0], renew_before_seconds=60)
    threads = [threading.Thread(target=client.get_health) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(transport.to(TOKEN_PATH)) == 1, "two concurrent first calls, one token request"
    first = transport.sent[-1].authorization
    clock[0] += client.tokens.token()["expires_in"] - 61
    client.get_health()
    assert len(transport.to(TOKEN_PATH)) == 1, "still fresh a minute and a second before expiry"
    clock[0] += 2
    assert client.get_health()["data"]
    assert len(transport.to(TOKEN_PATH)) == 2, "renewed inside the last minute"
    assert transport.sent[-1].authorization != first


@CREDENTIAL_KINDS
def test_a_token_the_server_calls_expired_is_replaced_and_the_call_sent_again(credentials: Credentials) -> None:
    transport = RecordingTransport()
    frozen = time.time()
    client = ExtensionClient(ENV["SVC_TEST_SHORT_LIVED_BASE_URL"], credentials, transport=transport, now=lambda: frozen)
    client.get_health()
    # Past the token's life on the server's clock, while this client's clock stands still (a skewed clock).
    expires: float = jwt.decode(client.tokens.access_token(), options={"verify_signature": False})["exp"]
    until("the token has expired", lambda: time.time() > expires + 0.1)
    client.get_health()
    assert [s.status for s in transport.to("/api/v1/ext/health")] == [200, 401, 200]
    assert len(transport.to(TOKEN_PATH)) == 2


def test_with_a_key_each_attempt_of_a_token_request_is_an_assertion_signed_anew_for_the_url_it_is_posted_to() -> None:
    assert BY_EC_JWK is not None
    lost: list[Sent] = []

    def drop_first_token_answer(sent: Sent) -> bool:
        if sent.path == TOKEN_PATH and not lost:
            lost.append(sent)
            return True
        return False

    transport = RecordingTransport(drop_first_token_answer)
    client = ExtensionClient(BASE, BY_EC_JWK, transport=transport, retry=RetryOptions(base_delay_seconds=0.01))
    assert client.get_health()["data"]
    attempts = transport.to(TOKEN_PATH)
    assert [a.status for a in attempts] == [None, 200], "the first answer lost after the server accepted it, then a token"
    bodies = [json.loads(a.body) for a in attempts]
    public_key = private_key(json.loads(ENV["SVC_TEST_EC_PRIVATE_JWK"])).public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo).decode()
    claims = [jwt.decode(b["client_assertion"], public_key, algorithms=["ES384"], audience=f"{BASE}{TOKEN_PATH}") for b in bodies]
    assert claims[0]["jti"] != claims[1]["jti"], "a new jti for the retry: the service accepts each jti once"
    for body, claim in zip(bodies, claims):
        assert (body["client_assertion_type"], body["phi_mode"]) == (CLIENT_ASSERTION_TYPE, "phi")
        assert "client_secret" not in body and "client_id" not in body
        assert jwt.get_unverified_header(body["client_assertion"])["kid"] == ENV["SVC_TEST_EC_KID"]
        assert claim["iss"] == claim["sub"] == ENV["SVC_TEST_KEY_CLIENT_ID"]
        assert claim["exp"] - claim["iat"] == 300, "exp five minutes ahead"


def test_an_unregistered_key_is_refused_like_a_wrong_secret() -> None:
    assert BY_RSA_PEM is not None
    stranger = ExtensionClient(BASE, KeyCredentials(BY_RSA_PEM.client_id, rsa.generate_private_key(public_exponent=65537, key_size=2048), BY_RSA_PEM.kid, "phi"))
    with pytest.raises(ExtensionApiError) as refused:
        stranger.get_health()
    error = refused.value
    assert (error.status, error.code, error.retryable) == (401, "PLATFORM_INVALID_CREDENTIAL", False)
    assert error.api_error is not None and error.api_error["error"] == "invalid_client"


def test_pages_follow_next_cursor_and_next_offset_to_the_end_of_a_list() -> None:
    client = ExtensionClient(BASE, CREDENTIALS)
    pages = list(client.pages(client.list_patients, limit=2))
    ids = [patient["id"] for page in pages for patient in page["data"]]
    assert len(ids) >= 5
    assert len(ids) == pages[0]["meta"]["total"], "every chart of the agency"
    assert len(pages) == -(-len(ids) // 2)
    assert len(set(ids)) == len(ids), "none twice"
    assert pages[-1]["meta"].get("next_cursor") is None
    by_offset = [patient["id"] for page in client.offset_pages(client.list_patients, limit=2) for patient in page["data"]]
    assert by_offset == ids, "the offset walk sees the same list in the same order"
    status = pages[0]["data"][0]["status"]
    filtered = list(client.items(client.list_patients, limit=1, status=status))
    assert len(filtered) > 1, "items yields each item of every page"
    assert all(patient["status"] == status for patient in filtered), "with the filters kept on every page"


def test_a_command_key_is_reused_when_its_answer_is_lost_and_it_is_sent_again() -> None:
    dropped: list[Sent] = []

    def drop_first_post(sent: Sent) -> bool:
        if sent.method == "POST" and sent.path == "/api/v1/ext/referrals" and not dropped:
            dropped.append(sent)
            return True
        return False

    transport = RecordingTransport(drop_first_post)
    client = ExtensionClient(BASE, CREDENTIALS, transport=transport, retry=RetryOptions(base_delay_seconds=0.01))
    created = client.create_referral(referral("Lostanswer"))
    posts = transport.to("/api/v1/ext/referrals")
    assert len(posts) == 2, "sent again after the lost answer"
    assert posts[0].key is not None and re.fullmatch(r"[A-Za-z0-9._:-]{8,128}", posts[0].key), "a key the contract accepts"
    assert posts[1].key == posts[0].key, "the same key on the retry"
    assert posts[1].replayed == "true", "the server replayed the first answer"
    recorded = [r for r in client.items(client.list_referrals, limit=200) if r["id"] == created["data"]["referral_id"]]
    assert len(recorded) == 1, "one referral recorded"
    client.create_referral(referral("Secondcall"))
    assert transport.sent[-1].key not in (None, posts[0].key), "the next command gets its own key"
    client.list_patients(limit=1)
    assert transport.sent[-1].key is None, "a read gets none"


def test_refusals_are_typed_errors_in_either_shape_not_retried_when_not_retryable() -> None:
    transport = RecordingTransport()
    client = ExtensionClient(BASE, CREDENTIALS, transport=transport)
    invalid: ReferralCreateRequest = {"service_line": "home_health", "patient_zip_code": "02108"}
    with pytest.raises(ExtensionApiError) as refused:
        client.create_referral(invalid)
    assert len(transport.to("/api/v1/ext/referrals")) == 1, "sent once"
    error = refused.value
    assert (error.status, error.code, error.category, error.retryable, error.terminal) == (400, "PLATFORM_INVALID_INPUT", "validation", False, True)
    assert error.platform_error is not None, "the body in the ExternalPlatformError shape"

    wrong_secret = ExtensionClient(BASE, SecretCredentials(CREDENTIALS.client_id, "sec_not-the-secret", "phi"))
    with pytest.raises(ExtensionApiError) as unauthenticated:
        wrong_secret.get_health()
    error = unauthenticated.value
    assert (error.status, error.code, error.retryable) == (401, "PLATFORM_INVALID_CREDENTIAL", False)
    assert error.api_error is not None and error.api_error["error"] == "invalid_client"


def test_a_retryable_refusal_is_sent_again_after_its_retry_after_up_to_max_attempts() -> None:
    waits: list[float] = []
    transport = RecordingTransport()
    client = ExtensionClient(BASE, LIMITED, transport=transport, retry=RetryOptions(max_attempts=3, max_delay_seconds=120, sleep=waits.append))
    client.get_health()
    client.get_health()
    with pytest.raises(ExtensionApiError) as limited:
        client.get_health()
    attempts = transport.to("/api/v1/ext/health")[2:]
    assert limited.value.status == 429, "the third call of the minute is refused"
    assert len(attempts) == 3, "three attempts"
    assert waits == [float(a.retry_after or "nan") for a in attempts[:2]], "each wait is the Retry-After of the refusal before it"
    assert all(w > 0 for w in waits), "the refusals named a delay"
    assert (limited.value.code, limited.value.retryable) == ("PLATFORM_RATE_LIMITED", True)

    impatient_transport = RecordingTransport()
    impatient = ExtensionClient(BASE, LIMITED, transport=impatient_transport, retry=RetryOptions(max_delay_seconds=0.5))
    with pytest.raises(ExtensionApiError):
        impatient.get_health()
    assert len(impatient_transport.to("/api/v1/ext/health")) == 1, "a Retry-After past max_delay_seconds is not waited for"
