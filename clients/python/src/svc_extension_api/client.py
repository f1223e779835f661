"""The typed client of contract version 2: a method per operation (generated), over httpx."""
from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import httpx

from .errors import error_of
from .generated.contract import COMMANDS, CONTRACT_VERSION
from .generated.operations import Operations
from .pages import Listed, P, PageT, T, items, offset_pages, pages
from .retries import RetryOptions, send_with_retries
from .tokens import TOKEN_PATH, Credentials, TokenSource


class ExtensionClient(Operations):
    """Each operation's method returns the parsed answer or raises ExtensionApiError. Pins svc-contract-version 2."""

    def __init__(
        self,
        base_url: str,
        credentials: Credentials,
        *,
        retry: RetryOptions | None = None,
        renew_before_seconds: float = 60,
        token_url: str | None = None,
        transport: httpx.BaseTransport | None = None,
        now: Callable[[], float] = time.time,
        timeout: float = 30,
    ) -> None:
        """`token_url` is where tokens are asked for and the assertion's aud (default: the base URL's token endpoint);
        `transport` replaces httpx's (tests record with it); `now` is the clock tokens are timed by, in seconds."""
        self._retry = retry or RetryOptions()
        self._http = httpx.Client(base_url=base_url.rstrip("/"), transport=transport, timeout=timeout, headers={"svc-contract-version": CONTRACT_VERSION})
        url = token_url or f"{base_url.rstrip('/')}{TOKEN_PATH}"
        self.tokens = TokenSource(lambda request, proof: send_with_retries(self._http, request, self._retry, proof), url, credentials, renew_before_seconds, now)

    def pages(self, operation: Callable[P, PageT], *args: P.args, **kwargs: P.kwargs) -> Iterator[PageT]:
        """Each page of a list operation (`api.pages(api.list_patients, limit=100)`), by meta.next_cursor."""
        return pages(operation, *args, **kwargs)

    def offset_pages(self, operation: Callable[P, PageT], *args: P.args, **kwargs: P.kwargs) -> Iterator[PageT]:
        """Each page by meta.next_offset."""
        return offset_pages(operation, *args, **kwargs)

    def items(self, operation: Callable[P, Listed[T]], *args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
        """Each item of every page, by meta.next_cursor."""
        return items(operation, *args, **kwargs)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ExtensionClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send(self, method: str, template: str, *, path: dict[str, Any], query: dict[str, Any], headers: dict[str, Any], body: Any = None) -> Any:
        url = template
        for name, value in path.items():
            url = url.replace(f"{{{name}}}", quote(str(value), safe=""))
        sent_headers = {name: str(value) for name, value in headers.items() if value is not None}
        # A command's key is drawn once here, so that every retry of this call sends the same one.
        if f"{method} {template}" in COMMANDS and "idempotency-key" not in sent_headers:
            sent_headers["idempotency-key"] = f"idem_{uuid.uuid4()}"
        params = {name: _query_value(value) for name, value in query.items() if value is not None}
        request = self._http.build_request(method, url, params=params, headers=sent_headers, json=body)
        response = send_with_retries(self._http, request, self._retry, self.tokens)
        if not response.is_success:
            raise error_of(response)
        return response.json() if response.content else None


def _query_value(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)
