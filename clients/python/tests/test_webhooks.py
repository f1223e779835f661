"""verify_delivery against deliveries signed as the service signs them."""
from __future__ import annotations

import json

import pytest

from svc_extension_api import WebhookVerificationError, payload_hash, verify_delivery
from svc_extension_api.webhooks import signature_v1

NOW = 1_796_000_000
BODY = json.dumps({"id": "evt_1", "type": "referral.created", "data": {"referral_id": "ref_1"}}).encode()


def delivery(secret: str, previous: str | None = None, body: bytes = BODY, timestamp: int = NOW) -> dict[str, str]:
    hash_ = payload_hash(body)
    headers = {
        "X-Svc-Payload-Sha256": hash_,
        "X-Svc-Signature-Timestamp": str(timestamp),
        "X-Svc-Delivery-Id": "dlv_1",
        "X-Svc-Signature": signature_v1(secret, str(timestamp), "dlv_1", hash_, body),
    }
    if previous is not None:
        headers["X-Svc-Signature-Previous"] = signature_v1(previous, str(timestamp), "dlv_1", hash_, body)
    return headers


def test_a_delivery_signed_with_the_secret_gives_its_envelope() -> None:
    assert verify_delivery(BODY, delivery("whsec_new"), "whsec_new", now=NOW)["type"] == "referral.created"


def test_during_a_rotation_either_signature_under_either_secret_verifies() -> None:
    headers = delivery("whsec_new", previous="whsec_old")
    assert verify_delivery(BODY, headers, ["whsec_old"], now=NOW)["id"] == "evt_1", "the receiver still holds only the old secret"
    assert verify_delivery(BODY, headers, ["whsec_new"], now=NOW)["id"] == "evt_1"
    with pytest.raises(WebhookVerificationError) as refused:
        verify_delivery(BODY, headers, ["whsec_other"], now=NOW)
    assert refused.value.reason == "signature_mismatch"


@pytest.mark.parametrize(
    ("tamper", "reason"),
    [
        (lambda h: {k: v for k, v in h.items() if k != "X-Svc-Delivery-Id"}, "missing_header"),
        (lambda h: {**h, "X-Svc-Payload-Sha256": payload_hash(b"{}")}, "payload_hash_mismatch"),
        (lambda h: {**h, "X-Svc-Signature-Timestamp": str(NOW - 301)}, "timestamp_out_of_tolerance"),
        (lambda h: {**h, "X-Svc-Delivery-Id": "dlv_2"}, "signature_mismatch"),
    ],
)
def test_each_failed_check_names_itself(tamper: object, reason: str) -> None:
    assert callable(tamper)
    with pytest.raises(WebhookVerificationError) as refused:
        verify_delivery(BODY, tamper(delivery("whsec_new")), "whsec_new", now=NOW)
    assert refused.value.reason == reason


def test_a_signed_body_that_is_not_json_is_malformed() -> None:
    with pytest.raises(WebhookVerificationError) as refused:
        verify_delivery(b"not json", delivery("whsec_new", body=b"not json"), "whsec_new", now=NOW)
    assert refused.value.reason == "malformed_body"
