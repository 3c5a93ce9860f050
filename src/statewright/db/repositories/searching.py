"""Conditions for the API's list filters, as Airflow 3.3 reads them: a pattern is SQL
``ILIKE`` anywhere in the value (``%`` and ``_`` its wildcards), a prefix pattern ``LIKE`` at
its start (case-sensitive), a time range its four bounds."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def searched(column: Any, pattern: str | None, prefix: str | None = None) -> list[Any]:
    where: list[Any] = []
    if pattern:
        where.append(column.ilike(f"%{pattern}%"))
    if prefix:
        where.append(column.like(f"{prefix}%"))
    return where


Bounds = tuple[datetime | None, datetime | None, datetime | None, datetime | None]
"""(gte, gt, lte, lt)."""


def within(column: Any, bounds: Bounds) -> list[Any]:
    ops = (column.__ge__, column.__gt__, column.__le__, column.__lt__)
    return [op(value) for value, op in zip(bounds, ops, strict=True) if value is not None]


def ordered(columns: dict[str, Any], order: list[tuple[str, bool]]) -> list[Any]:
    """ORDER BY terms of ``(name, descending)`` pairs naming ``columns``."""
    return [columns[n].desc() if down else columns[n].asc() for n, down in order]
