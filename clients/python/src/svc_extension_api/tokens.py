"""Access tokens by client_credentials, the client authenticated by its secret or by a key it signs with."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from .assertion import CLIENT_ASSERTION_TYPE, client_assertion
from .errors import ExtensionApiError, error_of
from .generated.schema import TokenResponse

PhiMode = Literal["phi", "no_phi"]
TOKEN_PATH = "/api/v1/oauth/token"


@dataclass(frozen=True)
class SecretCredentials:
    client_id: str
    client_secret: str
    phi_mode: PhiMode
    agency_id: str | None = None
    """The agency the token is for (default: the integration's own)."""
    scope: str | None = None
    """Space-separated subset of the granted scopes (default: all granted)."""


@dataclass(frozen=True)
class KeyCredentials:
    """private_key_jwt: the PEM of a private key registered for the client (RSA or EC P-384) and its kid."""

    client_id: str
    private_key_pem: bytes
    kid: str
    phi_mode: PhiMode
    agency_id: str | None = None
    scope: str | None = None


Credentials = SecretCredentials | KeyCredentials


def token_request_body(credentials: Credentials, token_url: str, now: float) -> dict[str, Any]:
    """The token request: the client's proof (secret or assertion) beside phi_mode, agency_id and scope."""
    if isinstance(credentials, SecretCredentials):
        proof = {"client_id": credentials.client_id, "client_secret": credentials.client_secret}
    else:
        assertion = client_assertion(credentials.client_id, token_url, credentials.private_key_pem, credentials.kid, now)
        proof = {"client_assertion_type": CLIENT_ASSERTION_TYPE, "client_assertion": assertion}
    extra = {"agency_id": credentials.agency_id, "scope": credentials.scope}
    return {"grant_type": "client_credentials", **proof, "phi_mode": credentials.phi_mode, **{k: v for k, v in extra.items() if v is not None}}


class TokenSource:
    """One token shared until `renew_before_seconds` (at most half its life) before its expires_in runs out; threads
    asking meanwhile wait for the one request that fetches the next."""

    def __init__(
        self,
        send: Callable[[httpx.Request], httpx.Response],
        token_url: str,
        credentials: Credentials,
        renew_before_seconds: float = 60,
        now: Callable[[], float] = time.time,
    ) -> None:
        self._send = send
        self._token_url = token_url
        self._credentials = credentials
        self._renew_before_seconds = renew_before_seconds
        self._now = now
        self._lock = threading.Lock()
        self._current: tuple[TokenResponse, float] | None = None

    def access_token(self) -> str:
        return self.token()["access_token"]

    def token(self) -> TokenResponse:
        """The token endpoint's whole answer for the held token, fetched when none is held or it is near expiry."""
        with self._lock:
            if self._current is None or self._now() >= self._current[1]:
                self._current = self._fetch()
            return self._current[0]

    def invalidate(self) -> None:
        """Forgets the held token, so that the next call fetches one."""
        with self._lock:
            self._current = None

    def authorize(self, request: httpx.Request) -> None:
        request.headers["authorization"] = f"Bearer {self.access_token()}"

    def renews(self, error: ExtensionApiError) -> bool:
        """An expired token (this clock behind the server's, or one held past its life) is replaced, and the call sent again."""
        if error.code != "PLATFORM_TOKEN_EXPIRED":
            return False
        self.invalidate()
        return True

    def _fetch(self) -> tuple[TokenResponse, float]:
        requested_at = self._now()
        body = token_request_body(self._credentials, self._token_url, requested_at)
        response = self._send(httpx.Request("POST", self._token_url, json=body))
        if not response.is_success:
            raise error_of(response)
        token: TokenResponse = response.json()
        # Renew early, but never so early that a short-lived token is fetched again at every call.
        margin = min(self._renew_before_seconds, token["expires_in"] / 2)
        return token, requested_at + token["expires_in"] - margin
