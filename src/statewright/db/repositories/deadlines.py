"""Queries on ``deadline``: written with each run, read by the scheduler from the
``(status, deadline_time)`` index, cancelled when the run ends in time."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, select, update

from statewright.core import deadlines as rules
from statewright.core.errors import DagDefinitionError
from statewright.db.bulk import chunks
from statewright.db.tables import dag, dag_run
from statewright.db.tables_deadlines import deadline

log = logging.getLogger("statewright.deadlines")
PENDING, MISSED, CANCELLED = "pending", "missed", "cancelled"


def create_for_runs(conn: Connection, run_pks: Sequence[int], now: datetime) -> int:
    """Store the deadlines of new runs whose DAG has deadline alerts; returns how many."""
    rows: list[dict[str, Any]] = []
    r = dag_run.c
    for chunk in chunks(list(run_pks), 500):
        runs = conn.execute(
            select(r.id, r.dag_id, r.run_id, r.queued_at, r.logical_date, dag.c.deadline)
            .join(dag, dag.c.dag_id == r.dag_id)
            .where(r.id.in_(chunk), dag.c.deadline.is_not(None))).all()
        averages: dict[tuple[str, int], list[float]] = {}
        for run in runs:
            try:
                alerts = rules.parse_alerts(run.deadline)
            except DagDefinitionError:
                log.exception("DAG %s: its deadline alerts cannot be read", run.dag_id)
                continue
            for i, alert in enumerate(alerts):
                seconds = None
                if alert.reference == rules.AVERAGE_RUNTIME:
                    key = (run.dag_id, alert.max_runs)
                    if key not in averages:
                        averages[key] = recent_durations(conn, run.dag_id, alert.max_runs)
                    seconds = rules.average_runtime(averages[key], alert)
                when = rules.deadline_time(alert, queued_at=run.queued_at,
                                           logical_date=run.logical_date, now=now,
                                           average_seconds=seconds)
                if when is not None:
                    rows.append({"dag_run_id": run.id, "dag_id": run.dag_id,
                                 "run_id": run.run_id, "alert_index": i,
                                 "reference": alert.public_name, "deadline_time": when,
                                 "callback": dict(alert.callback), "status": PENDING,
                                 "created_at": now})
    if rows:
        conn.execute(deadline.insert(), rows)
    return len(rows)


def recent_durations(conn: Connection, dag_id: str, limit: int) -> list[float]:
    """Durations in seconds of the DAG's newest successful runs, newest first."""
    r = dag_run.c
    rows = conn.execute(
        select(r.start_date, r.end_date)
        .where(r.dag_id == dag_id, r.state == "success", r.start_date.is_not(None),
               r.end_date.is_not(None))
        .order_by(r.end_date.desc()).limit(limit)).all()
    return [(row.end_date - row.start_date).total_seconds() for row in rows]


def cancel_for_runs(conn: Connection, run_pks: Iterable[int], now: datetime) -> int:
    """Runs that just ended: their deadlines still ahead are cancelled (met). A deadline that
    already passed stays pending: the scheduler decides it from the run's end."""
    d = deadline.c
    n = 0
    for chunk in chunks(sorted(set(run_pks)), 500):
        n += conn.execute(
            update(deadline)
            .where(d.dag_run_id.in_(chunk), d.status == PENDING, d.deadline_time > now)
            .values(status=CANCELLED, cancelled_at=now,
                    message="the run ended before its deadline")).rowcount or 0
    return n


@functools.cache
def _any_due() -> Any:
    # Asked on every scheduler pass: built once, one index probe, no join.
    d = deadline.c
    return select(d.id).where(d.status == PENDING,
                              d.deadline_time <= bindparam("now", type_=d.deadline_time.type)
                              ).limit(1)


def due_query(now: datetime) -> Any:
    """The pending deadlines that passed (a query for an ``EXISTS``)."""
    d = deadline.c
    return select(d.id).where(d.status == PENDING, d.deadline_time <= now)


def any_due(conn: Connection, now: datetime) -> bool:
    """Has any pending deadline passed? (the ``(status, deadline_time)`` index alone)"""
    return conn.execute(_any_due(), {"now": now}).first() is not None


def due(conn: Connection, now: datetime, limit: int) -> list[Any]:
    """Pending deadlines that passed, oldest first, with their run's end (from the index)."""
    d = deadline.c
    return list(conn.execute(
        select(d.id, d.dag_run_id, d.dag_id, d.run_id, d.deadline_time, d.reference,
               d.callback, dag_run.c.end_date.label("run_ended_at"))
        .join(dag_run, dag_run.c.id == d.dag_run_id)
        .where(d.status == PENDING, d.deadline_time <= now)
        .order_by(d.deadline_time).limit(limit)).all())


def cancel(conn: Connection, ids: Sequence[int], now: datetime) -> int:
    """Pending deadlines whose run ended in time → cancelled."""
    d = deadline.c
    n = 0
    for chunk in chunks(list(ids), 500):
        n += conn.execute(update(deadline).where(d.id.in_(chunk), d.status == PENDING).values(
            status=CANCELLED, cancelled_at=now, message="the run ended before its deadline")
        ).rowcount or 0
    return n


def claim_missed(conn: Connection, ids: Sequence[int], now: datetime) -> set[int]:
    """Pending → missed (a compare-and-set: of two schedulers, one gets each); the ids won."""
    d = deadline.c
    won: set[int] = set()
    for chunk in chunks(list(ids), 500):
        won |= set(conn.execute(
            update(deadline).where(d.id.in_(chunk), d.status == PENDING)
            .values(status=MISSED, missed_at=now).returning(d.id)).scalars())
    return won


def link_callbacks(conn: Connection, links: Sequence[tuple[int, int, str]]) -> None:
    """(deadline id, dag_callback id, message) for missed deadlines."""
    if links:
        d = deadline.c
        conn.execute(update(deadline).where(d.id == bindparam("k_id")).values(
            callback_id=bindparam("k_cb"), message=bindparam("k_msg")),
            [{"k_id": i, "k_cb": cb, "k_msg": m} for i, cb, m in links])


def for_run(conn: Connection, dag_run_id: int) -> list[Any]:
    return list(conn.execute(select(deadline).where(deadline.c.dag_run_id == dag_run_id)
                             .order_by(deadline.c.alert_index)).all())


def by_callback(conn: Connection, callback_ids: Iterable[int]) -> dict[int, Any]:
    """dag_callback id → the deadline row it runs the callback of."""
    ids = sorted(set(callback_ids))
    out: dict[int, Any] = {}
    for chunk in chunks(ids, 500):
        for row in conn.execute(select(deadline).where(deadline.c.callback_id.in_(chunk))):
            out[row.callback_id] = row
    return out
