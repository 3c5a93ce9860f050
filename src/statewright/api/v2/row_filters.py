"""Airflow's list filters for ``/api/v2``, over the rows the ``/api/v1`` reads answer (lists an
admin keeps small: connections, variables, pools, tags, jobs…): pattern searches
(``*_pattern``: SQL ``ILIKE`` anywhere in the value, ``%`` and ``_`` as wildcards;
``*_prefix_pattern``: ``LIKE`` at its start, case-sensitive as Airflow 3.3's) and
``order_by`` (names, ``-`` for descending; a name the route does not sort by is a 400 naming
it, as in Airflow)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated, Any, TypeVar

from fastapi import Query
from pydantic import AfterValidator

from statewright.api.errors import ApiError

T = TypeVar("T")

Pattern = Annotated[str | None, Query(description="SQL LIKE anywhere in the value, "
                                                  "case-insensitive (% and _ as wildcards).")]
Prefix = Annotated[str | None, Query(description="SQL LIKE at the start of the value "
                                                 "(case-sensitive).")]


def _utc(value: datetime | None) -> datetime | None:
    """A time without a zone is UTC, as in Airflow."""
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


When = Annotated[datetime | None, AfterValidator(_utc), Query()]
"""A time filter (``*_gte``, ``before``…); without a zone, UTC."""
OrderBy = Annotated[list[str] | None, Query(description="Field names; '-' before one for "
                                                        "descending.")]


@lru_cache(maxsize=256)
def _like(pattern: str, anywhere: bool) -> re.Pattern[str]:
    body = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    if anywhere:
        return re.compile("(?s).*" + body + ".*", re.IGNORECASE)
    return re.compile("(?s)" + body + ".*")


def matches(value: str | None, pattern: str | None, prefix: str | None = None) -> bool:
    """Whether ``value`` passes a pattern search and a prefix search (each when given)."""
    text = value or ""
    if pattern and not _like(pattern, True).fullmatch(text):
        return False
    return not (prefix and not _like(prefix, False).fullmatch(text))


def search(rows: Iterable[T], key: Callable[[T], str | None], pattern: str | None,
           prefix: str | None = None) -> list[T]:
    return [r for r in rows if matches(key(r), pattern, prefix)]


def _get(row: Any, field: str) -> Any:
    return row.get(field) if isinstance(row, dict) else getattr(row, field, None)


def _sort_key(value: Any) -> tuple[bool, Any]:
    return (value is None, "" if value is None else value)  # nulls last, as PostgreSQL's


def sort_spec(order_by: Sequence[str] | None, allowed: Mapping[str, str], default: str
              ) -> list[tuple[str, bool]]:
    """``(field, descending)`` pairs of ``order_by`` (``default`` when none is given), each
    name mapped by ``allowed`` to the field holding it; an unknown name is a 400."""
    names = [n.strip() for spec in order_by or [default] for n in spec.split(",") if n.strip()]
    out = []
    for spec in names:
        name = spec.lstrip("-")
        if name not in allowed:
            raise ApiError(f"Ordering with '{name}' is disallowed or the attribute does not "
                           f"exist on the model (this route sorts by: "
                           f"{', '.join(sorted(allowed))})")
        out.append((allowed[name], spec.startswith("-")))
    return out


def order(rows: Iterable[T], order_by: Sequence[str] | None, allowed: Mapping[str, str],
          default: str) -> list[T]:
    """``rows`` sorted by ``order_by`` (see ``sort_spec``)."""
    out = list(rows)
    for field, descending in reversed(sort_spec(order_by, allowed, default)):
        out.sort(key=lambda r, f=field: _sort_key(_get(r, f)),  # type: ignore[misc]
                 reverse=descending)
    return out


def every(page: Callable[..., Any], attr: str) -> list[Any]:
    """Every row of a paged ``/api/v1`` list read (``page(limit=, offset=)``)."""
    rows: list[Any] = []
    while True:
        got = page(limit=1000, offset=len(rows))
        items = list(getattr(got, attr))
        rows += items
        if not items or len(rows) >= got.total_entries:
            return rows


def window(rows: Sequence[T], limit: int, offset: int) -> list[T]:
    return list(rows[offset:offset + limit])


def listed(rows: Iterable[T], key: Callable[[T], str | None], pattern: str | None,
           prefix: str | None, order_by: Sequence[str] | None, allowed: Mapping[str, str],
           limit: int, offset: int, default: str = "id") -> tuple[list[T], int]:
    """One page of ``rows`` searched by ``key`` and ordered, and how many matched."""
    found = order(search(rows, key, pattern, prefix), order_by, allowed, default)
    return found[offset:offset + limit], len(found)
