"""Backfills: a date range of one DAG, and one row per logical date of the range."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, func, select, update

from statewright.core.states import RUN
from statewright.db.tables import backfill, backfill_dag_run, dag_run

bdr = backfill_dag_run.c
dr = dag_run.c
_ACTIVE = (RUN.QUEUED.value, RUN.RUNNING.value, RUN.PAUSED.value)

#: ``exception_reason`` of a row whose run is to be created (None) or cleared ("reprocess").
PENDING_CREATE = None
PENDING_REPROCESS = "reprocess"


def create(conn: Connection, *, dag_id: str, from_date: datetime, to_date: datetime,
           run_backwards: bool, dag_run_conf: Mapping[str, Any] | None,
           reprocess_behavior: str, max_active_runs: int, now: datetime,
           rows: Sequence[Mapping[str, Any]]) -> int:
    """Insert a backfill and its rows (logical_date, data interval, run_after, dag_run_id,
    exception_reason); returns its id."""
    pk = conn.execute(backfill.insert().values(
        dag_id=dag_id, from_date=from_date, to_date=to_date, run_backwards=run_backwards,
        dag_run_conf=dict(dag_run_conf or {}), reprocess_behavior=reprocess_behavior,
        max_active_runs=max_active_runs, created_at=now, updated_at=now,
    ).returning(backfill.c.id)).scalar_one()
    if rows:
        conn.execute(backfill_dag_run.insert(), [
            {"backfill_id": pk, "sort_ordinal": i, **dict(r)} for i, r in enumerate(rows)])
    return int(pk)


def get(conn: Connection, backfill_id: int) -> Any:
    return conn.execute(select(backfill).where(backfill.c.id == backfill_id)).first()


def unfinished(conn: Connection, *, lock: bool = False) -> list[Any]:
    stmt = select(backfill).where(backfill.c.completed_at.is_(None)).order_by(backfill.c.id)
    if lock:
        stmt = stmt.with_for_update(skip_locked=True)
    return list(conn.execute(stmt).all())


def active_runs(conn: Connection, backfill_ids: Collection[int]) -> dict[int, int]:
    """Queued, running or paused runs per backfill."""
    if not backfill_ids:
        return {}
    rows = conn.execute(
        select(bdr.backfill_id, func.count())
        .join(dag_run, dr.id == bdr.dag_run_id)
        .where(bdr.backfill_id.in_(list(backfill_ids)), dr.state.in_(_ACTIVE))
        .group_by(bdr.backfill_id)
    ).all()
    return {r[0]: int(r[1]) for r in rows}


def pending(conn: Connection, backfill_id: int, limit: int | None = None) -> list[Any]:
    """Rows whose run is still to be created or cleared, in the backfill's order."""
    stmt = (
        select(backfill_dag_run)
        .where(bdr.backfill_id == backfill_id,
               (bdr.dag_run_id.is_(None) & bdr.exception_reason.is_(None))
               | (bdr.exception_reason == PENDING_REPROCESS))
        .order_by(bdr.sort_ordinal)
    )
    if limit is not None:
        stmt = stmt.limit(limit)
    return list(conn.execute(stmt).all())


def count_pending(conn: Connection, backfill_ids: Collection[int]) -> dict[int, int]:
    if not backfill_ids:
        return {}
    rows = conn.execute(
        select(bdr.backfill_id, func.count())
        .where(bdr.backfill_id.in_(list(backfill_ids)),
               (bdr.dag_run_id.is_(None) & bdr.exception_reason.is_(None))
               | (bdr.exception_reason == PENDING_REPROCESS))
        .group_by(bdr.backfill_id)
    ).all()
    return {r[0]: int(r[1]) for r in rows}


def link(conn: Connection, row_id: int, *, dag_run_id: int | None,
         exception_reason: str | None = None) -> None:
    conn.execute(update(backfill_dag_run).where(bdr.id == row_id).values(
        dag_run_id=dag_run_id, exception_reason=exception_reason))


def complete(conn: Connection, backfill_id: int, now: datetime) -> None:
    conn.execute(update(backfill).where(backfill.c.id == backfill_id)
                 .values(completed_at=now, updated_at=now))


def rows_with_state(conn: Connection, backfill_id: int) -> list[Any]:
    """Every row with the state of its run (None when no run is linked)."""
    return list(conn.execute(
        select(bdr.id, bdr.logical_date, bdr.exception_reason, bdr.dag_run_id,
               dr.run_id, dr.state)
        .select_from(backfill_dag_run.outerjoin(dag_run, dr.id == bdr.dag_run_id))
        .where(bdr.backfill_id == backfill_id)
        .order_by(bdr.sort_ordinal)
    ).all())


def runs_at(conn: Connection, dag_id: str, dates: Collection[datetime]) -> dict[datetime, Any]:
    """The existing runs of ``dag_id`` at these logical dates (the newest one per date)."""
    out: dict[datetime, Any] = {}
    ds = list(dates)
    for start in range(0, len(ds), 400):
        for row in conn.execute(
            select(dr.id, dr.run_id, dr.state, dr.logical_date)
            .where(and_(dr.dag_id == dag_id, dr.logical_date.in_(ds[start:start + 400])))
            .order_by(dr.id)
        ).all():
            out[row.logical_date] = row
    return out
