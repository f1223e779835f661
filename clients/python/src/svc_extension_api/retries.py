"""Sending a request again after a network failure or a retryable refusal, the same request (its idempotency key
included) each time, so that the server replays a first attempt whose answer was lost instead of running it twice."""
from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import httpx

from .errors import ExtensionApiError, error_of


@dataclass(frozen=True)
class RetryOptions:
    max_attempts: int = 3
    """Attempts in all, the first included."""
    max_delay_seconds: float = 30
    """A Retry-After longer than this is not waited for: the refusal is returned."""
    base_delay_seconds: float = 0.25
    """First backoff when no Retry-After is given, doubled per attempt with full jitter."""
    sleep: Callable[[float], None] = field(default=time.sleep)
    """How to wait, in seconds (tests pass their own)."""


class Authorizer(Protocol):
    def authorize(self, request: httpx.Request) -> httpx.Request:
        """The attempt to send: the request with its credentials set, or a new one with them in its body."""

    def renews(self, error: ExtensionApiError) -> bool:
        """Whether new credentials cure the refusal (an expired token)."""


def send_with_retries(client: httpx.Client, request: httpx.Request, options: RetryOptions, authorizer: Authorizer | None = None) -> httpx.Response:
    """The answer of the last attempt; a refusal it renews credentials for is sent again at once, once."""
    renewed = False
    attempt = 0
    while True:
        attempt += 1
        sent = request if authorizer is None else authorizer.authorize(request)
        backoff = random.random() * options.base_delay_seconds * 2 ** (attempt - 1)
        try:
            response = client.send(sent)
        except httpx.TransportError:
            if attempt >= options.max_attempts:
                raise
            options.sleep(backoff)
            continue
        if response.is_success or attempt >= options.max_attempts:
            return response
        error = error_of(response)
        if not renewed and authorizer is not None and authorizer.renews(error):
            renewed = True
            continue
        delay = backoff if error.retry_after_seconds is None else error.retry_after_seconds
        if not error.retryable or delay > options.max_delay_seconds:
            return response
        options.sleep(delay)
