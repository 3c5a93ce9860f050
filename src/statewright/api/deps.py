"""What every route needs: the engine, the settings, a read snapshot, paging parameters."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

from fastapi import Query, Request
from sqlalchemy import Connection, Engine

from statewright.config import Settings
from statewright.db.engine import read_snapshot, transaction


def engine_of(request: Request) -> Engine:
    return request.app.state.engine  # type: ignore[no-any-return]


def settings_of(request: Request) -> Settings:
    return request.app.state.settings  # type: ignore[no-any-return]


@contextmanager
def reading(request: Request) -> Iterator[Connection]:
    """A read-only snapshot (never waits for a writer on SQLite)."""
    with read_snapshot(engine_of(request)) as conn:
        yield conn


@contextmanager
def writing(request: Request) -> Iterator[Connection]:
    """One transaction; an exception rolls everything back."""
    with transaction(engine_of(request)) as conn:
        yield conn


Limit = Annotated[int, Query(ge=1, le=1000, description="Page size.")]
MAX_OFFSET = 2**31 - 1
"""The most rows a page may skip: a bigger offset overflows the database's integers."""
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="Rows to skip.")]
