"""Cursor handlers of Airflow's common-sql provider: what ``DbApiHook.run(handler=...)`` makes
of each statement's cursor."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["fetch_all_handler", "fetch_one_handler", "return_single_query_results"]


def fetch_all_handler(cursor: Any) -> list[tuple[Any, ...]] | None:
    """Every row of a statement that returns rows (None for one that does not)."""
    if cursor.description is None:
        return None
    return [tuple(row) for row in cursor.fetchall()]


def fetch_one_handler(cursor: Any) -> tuple[Any, ...] | None:
    """The first row of a statement that returns rows (None for none, or no rows)."""
    if cursor.description is None:
        return None
    row = cursor.fetchone()
    return None if row is None else tuple(row)


def return_single_query_results(sql: str | Iterable[str], return_last: bool,
                                split_statements: bool | None) -> bool:
    """Whether ``run`` gives one statement's result rather than a list of results."""
    return isinstance(sql, str) and (return_last or not split_statements)
