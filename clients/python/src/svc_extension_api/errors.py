"""A refusal in either of the contract's error shapes (ExternalPlatformError, ApiError), read as one exception."""
from __future__ import annotations

import email.utils
import math
import re
import time
from collections.abc import Mapping
from typing import Any

import httpx

from .generated.contract import ERROR_CODES, KnownCode

# Statuses a gateway or proxy may answer without a contract body, after which a retry may succeed.
TRANSIENT_STATUSES = frozenset({429, 502, 503, 504})


def known_code(code: str) -> KnownCode | None:
    """What the contract says of a code (x-svc-error-codes), or None for a code newer than this client."""
    return ERROR_CODES.get(code)


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as delay-seconds or an HTTP date (RFC 9110 10.2.3)."""
    if value is None or value.strip() == "":
        return None
    if re.fullmatch(r"\d+", value.strip()):
        return float(value.strip())
    try:
        date = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return float(max(0, math.ceil(date.timestamp() - (time.time() if now is None else now))))


class ExtensionApiError(Exception):
    """Branch on `code` (a known code or a newer one), else on `category` and `retryable`."""

    def __init__(self, status: int, body: Mapping[str, Any] | None, headers: httpx.Headers) -> None:
        error = None if body is None else body.get("error")
        platform: Mapping[str, Any] | None = error if isinstance(error, Mapping) else None
        api = body if body is not None and isinstance(error, str) else None
        code = str((platform or {}).get("code") or (api or {}).get("code") or f"HTTP_{status}")
        message = (platform or {}).get("message") or (api or {}).get("error_description") or (api or {}).get("user_message") or error
        super().__init__(message if isinstance(message, str) else f"HTTP {status}")
        known = known_code(code)
        self.status = status
        self.body = body
        self.code = code
        self.category: str | None = (platform or {}).get("category") or (known.category if known else None)
        self.retryable: bool = bool(
            platform["retryable"] if platform and "retryable" in platform else known.retryable if known else body is None and status in TRANSIENT_STATUSES
        )
        self.terminal: bool | None = platform.get("terminal") if platform else known.terminal if known else None
        self.request_id: str | None = (platform or {}).get("correlationId") or (api or {}).get("request_id") or headers.get("x-request-id")
        self.retry_after_seconds = retry_after_seconds(headers.get("retry-after"))

    @property
    def platform_error(self) -> Mapping[str, Any] | None:
        """The body's `error` when it is the ExternalPlatformError shape (an object)."""
        error = None if self.body is None else self.body.get("error")
        return error if isinstance(error, Mapping) else None

    @property
    def api_error(self) -> Mapping[str, Any] | None:
        """The body when it is the ApiError shape (a string in `error`, beside `code` and `issues`)."""
        return self.body if self.body is not None and isinstance(self.body.get("error"), str) else None


def error_of(response: httpx.Response) -> ExtensionApiError:
    """The error of a failed answer; a body in neither shape (a proxy's page, nothing) is read as none."""
    try:
        body = response.json()
    except ValueError:
        body = None
    return ExtensionApiError(response.status_code, body if isinstance(body, dict) and "error" in body else None, response.headers)
