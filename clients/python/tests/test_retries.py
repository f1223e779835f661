"""Retries and token renewal against a scripted server (httpx.MockTransport): the cases a live server cannot be
made to answer on cue."""
from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from svc_extension_api import ExtensionApiError, ExtensionClient, RetryOptions, SecretCredentials, retry_after_seconds

TOKEN = {"access_token": "at_1", "token_type": "Bearer", "expires_in": 900, "scope": "", "agency_id": "a", "extension_id": "e", "phi_mode": "no_phi", "data": {}}
EXPIRED = {"error": "invalid_token", "code": "PLATFORM_TOKEN_EXPIRED"}


def scripted(answers: Iterator[httpx.Response], seen: list[httpx.Request]) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1/oauth/token":
            return httpx.Response(200, json=TOKEN)
        seen.append(request)
        return next(answers)

    return httpx.MockTransport(handle)


def client(answers: list[httpx.Response], seen: list[httpx.Request], waits: list[float]) -> ExtensionClient:
    return ExtensionClient("http://api.test", SecretCredentials("cli", "sec", "no_phi"), transport=scripted(iter(answers), seen), retry=RetryOptions(sleep=waits.append))


def test_an_expired_token_is_renewed_once_and_a_second_expiry_is_raised() -> None:
    seen: list[httpx.Request] = []
    api = client([httpx.Response(401, json=EXPIRED), httpx.Response(401, json=EXPIRED), httpx.Response(200, json={})], seen, [])
    with pytest.raises(ExtensionApiError) as refused:
        api.get_health()
    assert refused.value.code == "PLATFORM_TOKEN_EXPIRED"
    assert len(seen) == 2, "renewed and sent again once, not in a loop"


def test_a_proxy_refusal_without_a_contract_body_is_retried_after_its_retry_after_date() -> None:
    seen: list[httpx.Request] = []
    waits: list[float] = []
    later = "Wed, 21 Oct 2099 07:28:00 GMT"
    api = client([httpx.Response(503, text="<html>busy</html>", headers={"retry-after": "2"}), httpx.Response(200, json={"data": {"status": "ok"}})], seen, waits)
    assert api.get_health() == {"data": {"status": "ok"}}
    assert waits == [2.0]
    assert retry_after_seconds(later, now=0) is not None and (retry_after_seconds(later, now=0) or 0) > 2_000_000_000
    assert retry_after_seconds("soon") is None


def test_a_command_sent_again_after_a_network_failure_keeps_its_key() -> None:
    keys: list[str | None] = []

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1/oauth/token":
            return httpx.Response(200, json=TOKEN)
        keys.append(request.headers.get("idempotency-key"))
        if len(keys) == 1:
            raise httpx.ReadTimeout("no answer", request=request)
        assert json.loads(request.content) == {"title": "Call back", "priority": "high"}
        return httpx.Response(201, json={"data": {}})

    api = ExtensionClient("http://api.test", SecretCredentials("cli", "sec", "no_phi"), transport=httpx.MockTransport(handle), retry=RetryOptions(sleep=lambda _: None))
    api.create_task({"title": "Call back", "priority": "high"})
    assert len(keys) == 2 and keys[0] is not None and keys[0] == keys[1]
