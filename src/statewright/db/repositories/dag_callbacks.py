"""The outbox of DAG-level callbacks (``dag_callback``): written in the transaction that ends a
run, claimed and run by an executor's callback runner."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, insert, or_, select, update

from statewright.db.tables import dag_callback

c = dag_callback.c
PENDING, RUNNING, DONE, FAILED = "pending", "running", "done", "failed"


def add(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """rows: dag_run_id, dag_id, run_id, kind, run_state, reason, created_at."""
    if rows:
        conn.execute(insert(dag_callback), [
            {**r, "status": PENDING, "attempts": 0} for r in rows
        ])


def add_returning(conn: Connection, rows: Sequence[dict[str, Any]]) -> list[int]:
    """Pending callbacks (as ``add``) in one statement; returns their ids in ``rows`` order."""
    if not rows:
        return []
    result = conn.execute(
        insert(dag_callback).returning(c.id, sort_by_parameter_order=True),
        [{**r, "status": PENDING, "attempts": 0} for r in rows])
    return [int(pk) for pk in result.scalars()]


def claim(conn: Connection, *, now: datetime, claimed_by: str, limit: int,
          stale_before: datetime, max_attempts: int = 3) -> list[Any]:
    """Claim pending callbacks (and running ones whose runner vanished before
    ``stale_before``), oldest first. Each claim is a compare-and-set on its status."""
    candidates = conn.execute(
        select(c.id, c.status, c.claimed_at).where(
            or_(c.status == PENDING,
                and_(c.status == RUNNING, c.claimed_at < stale_before)),
            c.attempts < max_attempts,
        ).order_by(c.created_at, c.id).limit(limit)
    ).all()
    claimed: list[int] = []
    for row in candidates:
        stmt = update(dag_callback).where(c.id == row.id, c.status == row.status)
        if row.claimed_at is not None:
            stmt = stmt.where(c.claimed_at == row.claimed_at)
        res = conn.execute(stmt.values(status=RUNNING, claimed_at=now, claimed_by=claimed_by,
                                       attempts=c.attempts + 1))
        if res.rowcount:
            claimed.append(row.id)
    if not claimed:
        return []
    return list(conn.execute(select(dag_callback).where(c.id.in_(claimed)).order_by(c.id)).all())


def finish(conn: Connection, callback_id: int, *, now: datetime, ok: bool,
           error: str | None) -> None:
    conn.execute(update(dag_callback).where(c.id == callback_id, c.status == RUNNING).values(
        status=DONE if ok else FAILED, finished_at=now, error=error))


def for_run(conn: Connection, dag_run_id: int) -> list[Any]:
    return list(conn.execute(
        select(dag_callback).where(c.dag_run_id == dag_run_id).order_by(c.id)).all())
