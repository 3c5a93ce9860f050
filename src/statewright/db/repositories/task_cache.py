"""The task result cache (``task_cache``), keyed by (dag_id, task_id, cache_key)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, or_, select
from sqlalchemy.dialects import postgresql, sqlite

from statewright.db.tables import task_cache

c = task_cache.c


def lookup(conn: Connection, dag_id: str, task_id: str, cache_key: str, now: datetime) -> Any:
    """The stored entry for the key when it has not expired, else ``None``."""
    return conn.execute(
        select(task_cache).where(
            c.dag_id == dag_id, c.task_id == task_id, c.cache_key == cache_key,
            or_(c.expires_at.is_(None), c.expires_at > now),
        )
    ).first()


def store(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Insert or replace entries: dicts with dag_id, task_id, cache_key, value, created_at,
    expires_at, run_id, try_number."""
    if not rows:
        return
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    for row in rows:
        stmt = dialect.insert(task_cache).values(**row)
        conn.execute(stmt.on_conflict_do_update(
            index_elements=[c.dag_id, c.task_id, c.cache_key],
            set_={k: stmt.excluded[k] for k in
                  ("value", "created_at", "expires_at", "run_id", "try_number")},
        ))


def purge_expired(conn: Connection, now: datetime) -> int:
    res = conn.execute(delete(task_cache).where(c.expires_at.is_not(None), c.expires_at <= now))
    return int(res.rowcount or 0)


def entries(conn: Connection, dag_id: str, task_id: str | None = None) -> list[Any]:
    stmt = select(task_cache).where(c.dag_id == dag_id).order_by(c.id)
    if task_id is not None:
        stmt = stmt.where(c.task_id == task_id)
    return list(conn.execute(stmt).all())
