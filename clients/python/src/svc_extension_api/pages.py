"""A list's pages as iterators: by meta.next_cursor (constant time at any depth) or by meta.next_offset."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, ParamSpec, TypedDict, TypeVar, cast

P = ParamSpec("P")
T = TypeVar("T")
PageT = TypeVar("PageT", bound=Mapping[str, Any])


class Listed(TypedDict, Generic[T]):
    data: list[T]


def pages(operation: Callable[P, PageT], *args: P.args, **kwargs: P.kwargs) -> Iterator[PageT]:
    """Each page of a list operation called with these filters, following meta.next_cursor to the end."""
    send = cast(Callable[..., PageT], operation)
    cursor: str | None = None
    while True:
        page = send(*args, **kwargs) if cursor is None else send(*args, **kwargs, cursor=cursor)
        yield page
        cursor = page["meta"].get("next_cursor")
        if cursor is None:
            return


def offset_pages(operation: Callable[P, PageT], *args: P.args, **kwargs: P.kwargs) -> Iterator[PageT]:
    """Each page following meta.next_offset (the offset walk stops at the contract's maximum offset: prefer cursors)."""
    send = cast(Callable[..., PageT], operation)
    offset: int | None = None
    while True:
        page = send(*args, **kwargs) if offset is None else send(*args, **kwargs, offset=offset)
        yield page
        offset = page["meta"].get("next_offset")
        if offset is None:
            return


def items(operation: Callable[P, Listed[T]], *args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
    """Each item of a list, page after page (by cursor)."""
    for page in pages(operation, *args, **kwargs):
        yield from page["data"]
