"""Access tokens by client_credentials, the client authenticated by its secret or by a key it signs with."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from .assertion import CLIENT_ASSERTION_TYPE, AssertionAlgorithm, SigningKey, client_assertion, private_key, signing_algorithm
from .errors import ExtensionApiError, error_of
from .retries import Authorizer
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
    """private_key_jwt: a private key whose public half is registered for the client (RSA or EC P-384), as PEM, a
    `cryptography` key object or a private JWK, and its kid. Checked here, before anything is sent."""

    client_id: str
    private_key: SigningKey
    kid: str
    phi_mode: PhiMode
    agency_id: str | None = None
    scope: str | None = None
    alg: AssertionAlgorithm | None = None
    """Default: RS384 for an RSA key, ES384 for an EC P-384 key."""

    def __post_init__(self) -> None:
        signing_algorithm(private_key(self.private_key), self.alg)
        if not self.kid:
            raise ValueError("kid must name the registered key")


Credentials = SecretCredentials | KeyCredentials


def token_request_body(credentials: Credentials, token_url: str, now: float | None = None) -> dict[str, Any]:
    """The token request: the client's proof (secret or assertion, signed at `now`, default the wall clock) beside
    phi_mode, agency_id and scope."""
    if isinstance(credentials, SecretCredentials):
        proof = {"client_id": credentials.client_id, "client_secret": credentials.client_secret}
    else:
        assertion = client_assertion(credentials.client_id, token_url, credentials.private_key, credentials.kid, now, credentials.alg)
        proof = {"client_assertion_type": CLIENT_ASSERTION_TYPE, "client_assertion": assertion}
    extra = {"agency_id": credentials.agency_id, "scope": credentials.scope}
    return {"grant_type": "client_credentials", **proof, "phi_mode": credentials.phi_mode, **{k: v for k, v in extra.items() if v is not None}}


class ClientProof:
    """Gives each attempt of a token request its body: with a key, signed anew, since the service accepts a jti once
    and a retry after a lost answer would otherwise be refused. Signed by the wall clock, not the clock tokens are
    timed by: the service checks exp against its own."""

    def __init__(self, credentials: Credentials, token_url: str) -> None:
        self._credentials = credentials
        self._token_url = token_url

    def authorize(self, request: httpx.Request) -> httpx.Request:
        headers = {name: value for name, value in request.headers.items() if name not in ("content-length", "content-type")}
        return httpx.Request(request.method, request.url, headers=headers, json=token_request_body(self._credentials, self._token_url))

    def renews(self, error: ExtensionApiError) -> bool:
        return False


class TokenSource:
    """One token shared until `renew_before_seconds` (at most half its life) before its expires_in runs out; threads
    asking meanwhile wait for the one request that fetches the next."""

    def __init__(
        self,
        send: Callable[[httpx.Request, Authorizer], httpx.Response],
        token_url: str,
        credentials: Credentials,
        renew_before_seconds: float = 60,
        now: Callable[[], float] = time.time,
    ) -> None:
        self._send = send
        self._token_url = token_url
        self._proof = ClientProof(credentials, token_url)
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

    def authorize(self, request: httpx.Request) -> httpx.Request:
        request.headers["authorization"] = f"Bearer {self.access_token()}"
        return request

    def renews(self, error: ExtensionApiError) -> bool:
        """An expired token (this clock behind the server's, or one held past its life) is replaced, and the call sent again."""
        if error.code != "PLATFORM_TOKEN_EXPIRED":
            return False
        self.invalidate()
        return True

    def _fetch(self) -> tuple[TokenResponse, float]:
        requested_at = self._now()
        response = self._send(httpx.Request("POST", self._token_url), self._proof)
        if not response.is_success:
            raise error_of(response)
        token: TokenResponse = response.json()
        # Renew early, but never so early that a short-lived token is fetched again at every call.
        margin = min(self._renew_before_seconds, token["expires_in"] / 2)
        return token, requested_at + token["expires_in"] - margin
