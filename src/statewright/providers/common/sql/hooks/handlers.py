"""Cursor handlers of Airflow's common-sql provider: what ``DbApiHook.run(handler=...)`` makes
of each statement's cursor."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["fetch_all_handler", "fetch_one_handler", "return_single_query_results"]


def fetch_all_handler(cursor: Any) -> list[Any] | None:
    """Every row of a statement that returns rows (None for one that does not)."""
    if cursor.description is None:
        return None
    return [_row(row) for row in cursor.fetchall()]


def fetch_one_handler(cursor: Any) -> Any:
    """The first row of a statement that returns rows (None for none, or no rows)."""
    if cursor.description is None:
        return None
    row = cursor.fetchone()
    return None if row is None else _row(row)


def _row(row: Any) -> Any:
    """A row as the cursor makes it when a tuple or a dict (a dict cursor's), else a tuple."""
    return row if isinstance(row, tuple | dict) else tuple(row)


def return_single_query_results(sql: str | Iterable[str], return_last: bool,
                                split_statements: bool | None) -> bool:
    """Whether ``run`` gives one statement's result rather than a list of results."""
    return isinstance(sql, str) and (return_last or not split_statements)
