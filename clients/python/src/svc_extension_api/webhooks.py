"""The receiver's side of webhook signing, the same checks as the service's verifyDelivery: the payload hash
against the raw body, the timestamp within the tolerance, and x-svc-signature or, during a secret rotation,
x-svc-signature-previous under one of the given secrets, all compared in constant time."""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

VerificationFailure = Literal["missing_header", "payload_hash_mismatch", "timestamp_out_of_tolerance", "signature_mismatch", "malformed_body"]


class WebhookVerificationError(Exception):
    def __init__(self, reason: VerificationFailure, message: str) -> None:
        super().__init__(message)
        self.reason: VerificationFailure = reason


def payload_hash(raw_body: bytes) -> str:
    """`sha256=` + hex SHA-256 of the raw body: x-svc-payload-sha256."""
    return f"sha256={hashlib.sha256(raw_body).hexdigest()}"


def signature_v1(secret: str, timestamp: str, delivery_id: str, hash_: str, raw_body: bytes) -> str:
    """`v1=` + hex HMAC-SHA256 of `v1.<timestamp>.<deliveryId>.<payloadHash>.<rawBody>`, keyed with the secret's text."""
    signed = f"v1.{timestamp}.{delivery_id}.{hash_}.".encode() + raw_body
    return f"v1={hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()}"


def _header(headers: Mapping[str, str], name: str) -> str | None:
    return next((value for key, value in headers.items() if key.lower() == name), None)


def _required(headers: Mapping[str, str], name: str) -> str:
    value = _header(headers, name)
    if not value:
        raise WebhookVerificationError("missing_header", f"the {name} header is missing")
    return value


def verify_delivery(
    raw_body: bytes | str,
    headers: Mapping[str, str],
    secrets: str | Sequence[str],
    *,
    tolerance_seconds: float = 300,
    now: float | None = None,
) -> dict[str, Any]:
    """The delivery's parsed envelope; WebhookVerificationError, whose `reason` says which check failed, otherwise.
    Verify before parsing, on the body's bytes as received."""
    body = raw_body.encode() if isinstance(raw_body, str) else raw_body
    hash_ = _required(headers, "x-svc-payload-sha256")
    timestamp = _required(headers, "x-svc-signature-timestamp")
    delivery_id = _required(headers, "x-svc-delivery-id")
    sent = [s for s in (_required(headers, "x-svc-signature"), _header(headers, "x-svc-signature-previous")) if s]
    if not hmac.compare_digest(payload_hash(body).encode(), hash_.encode()):
        raise WebhookVerificationError("payload_hash_mismatch", "x-svc-payload-sha256 does not match the body")
    clock = time.time() if now is None else now
    if not re.fullmatch(r"\d{1,12}", timestamp) or abs(clock - int(timestamp)) > tolerance_seconds:
        raise WebhookVerificationError("timestamp_out_of_tolerance", f"x-svc-signature-timestamp is more than {tolerance_seconds} seconds from now")
    candidates = [signature_v1(secret, timestamp, delivery_id, hash_, body) for secret in ([secrets] if isinstance(secrets, str) else secrets)]
    # Every pair is compared, so the time taken does not say which secret or header matched.
    matches = [hmac.compare_digest(expected.encode(), signature.encode()) for expected in candidates for signature in sent]
    if not any(matches):
        raise WebhookVerificationError("signature_mismatch", "no signature matches a given secret")
    try:
        envelope = json.loads(body)
    except ValueError:
        raise WebhookVerificationError("malformed_body", "the body is not JSON") from None
    if not isinstance(envelope, dict):
        raise WebhookVerificationError("malformed_body", "the body is not a JSON object")
    return envelope
