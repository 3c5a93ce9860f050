"""Backfills: a date range of one DAG, and one row per logical date of the range."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, case, func, select, update

from statewright.core.states import RUN
from statewright.db.tables import backfill, backfill_dag_run, dag_run

bdr = backfill_dag_run.c
dr = dag_run.c
_ACTIVE = (RUN.QUEUED.value, RUN.RUNNING.value, RUN.PAUSED.value)

#: ``exception_reason`` of a row whose run is to be created (None) or cleared ("reprocess").
PENDING_CREATE = None
PENDING_REPROCESS = "reprocess"
#: ``exception_reason`` of a row whose run was never made because the backfill was cancelled.
CANCELLED = "cancelled"


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


def unfinished_query() -> Any:
    """The backfills of ``unfinished`` (a query for an ``EXISTS``)."""
    return select(backfill.c.id).where(*_unfinished())


def _unfinished() -> tuple[Any, ...]:
    return backfill.c.completed_at.is_(None), backfill.c.is_paused.is_(False)


def unfinished(conn: Connection, *, lock: bool = False) -> list[Any]:
    """Backfills not completed and not paused (the ones the scheduler carries on)."""
    stmt = select(backfill).where(*_unfinished()).order_by(backfill.c.id)
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


# -- operating backfills (API, UI) ------------------------------------------------------------


def list_page(conn: Connection, *, dag_id: str | None, limit: int, offset: int
              ) -> tuple[list[Any], int]:
    """Backfills, newest first (of one DAG when ``dag_id``), and how many there are."""
    where = [backfill.c.dag_id == dag_id] if dag_id else []
    rows = conn.execute(select(backfill).where(*where).order_by(backfill.c.id.desc())
                        .limit(limit).offset(offset)).all()
    total = conn.execute(select(func.count()).select_from(backfill).where(*where)).scalar_one()
    return list(rows), int(total)


def set_paused(conn: Connection, backfill_id: int, paused: bool, now: datetime) -> bool:
    """Pause or unpause an unfinished backfill; False when it is completed or missing."""
    return bool(conn.execute(
        update(backfill).where(backfill.c.id == backfill_id, backfill.c.completed_at.is_(None))
        .values(is_paused=paused, updated_at=now)).rowcount)


def run_ids_in_state(conn: Connection, backfill_id: int, states: Collection[str]) -> list[str]:
    """The run ids of the backfill's runs in ``states``."""
    return [r.run_id for r in conn.execute(
        select(dr.run_id).join(backfill_dag_run, bdr.dag_run_id == dr.id)
        .where(bdr.backfill_id == backfill_id, dr.state.in_(list(states)))
        .order_by(bdr.sort_ordinal)).all()]


def progress(conn: Connection, backfill_ids: Collection[int]) -> dict[int, dict[str, int]]:
    """Per backfill: its rows counted by the state of their run (``pending`` when the run is
    still to be created or cleared, ``skipped`` when the date was left alone)."""
    if not backfill_ids:
        return {}
    state = case(
        (bdr.exception_reason == PENDING_REPROCESS, "pending"),
        (bdr.exception_reason.is_not(None), "skipped"),
        (bdr.dag_run_id.is_(None), "pending"),
        else_=func.coalesce(dr.state, "pending"))
    rows = conn.execute(
        select(bdr.backfill_id, state.label("state"), func.count())
        .select_from(backfill_dag_run.outerjoin(dag_run, dr.id == bdr.dag_run_id))
        .where(bdr.backfill_id.in_(list(backfill_ids)))
        .group_by(bdr.backfill_id, state)).all()
    out: dict[int, dict[str, int]] = {i: {} for i in backfill_ids}
    for backfill_id, key, n in rows:
        out[backfill_id][str(key)] = int(n)
    return out


def drop_pending(conn: Connection, backfill_id: int) -> int:
    """Rows whose run was still to be created or cleared are left alone (a cancel)."""
    return int(conn.execute(
        update(backfill_dag_run)
        .where(bdr.backfill_id == backfill_id,
               (bdr.dag_run_id.is_(None) & bdr.exception_reason.is_(None))
               | (bdr.exception_reason == PENDING_REPROCESS))
        .values(exception_reason=CANCELLED)).rowcount)
