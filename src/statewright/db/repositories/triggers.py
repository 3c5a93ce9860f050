"""Queries on ``trigger`` and the trigger columns of ``task_instance``.

A trigger row holds a classpath and Fernet-encrypted kwargs; ``triggerer_id`` names the
triggerer (a ``job`` row) running it. Task instances point at it with ``trigger_id`` while they
are deferred. State changes of those task instances go through the door, not through here.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    and_,
    bindparam,
    delete,
    exists,
    func,
    insert,
    or_,
    select,
    update,
)

from statewright.core.states import TI
from statewright.core.task_groups import group_task_ids
from statewright.db.engine import is_postgres
from statewright.db.tables import job, task_instance, trigger

ti = task_instance.c
tr = trigger.c
TRIGGERER_JOB = "triggerer"
_DEFERRED = TI.DEFERRED.value


def insert_many(conn: Connection, rows: Sequence[tuple[str, str]], now: datetime) -> list[int]:
    """Insert triggers ``(classpath, encrypted kwargs)``; returns their ids in order."""
    if not rows:
        return []
    result = conn.execute(
        insert(trigger).returning(tr.id, sort_by_parameter_order=True),
        [{"classpath": c, "kwargs": k, "created_date": now} for c, k in rows],
    )
    return [int(pk) for pk in result.scalars()]


# The triggerer's statements on every event are built once and run with bound parameters.
@functools.cache
def _delete_many(owned: bool) -> Any:
    stmt = delete(trigger).where(tr.id.in_(bindparam("ids", expanding=True)))
    return stmt.where(tr.triggerer_id == bindparam("owner")) if owned else stmt


def delete_many(conn: Connection, ids: Iterable[int], *, owner: int | None = None) -> int:
    """Delete triggers ``ids`` (with ``owner``: only those assigned to that triggerer)."""
    wanted = list(set(ids))
    if not wanted:
        return 0
    params: dict[str, Any] = {"ids": wanted}
    if owner is not None:
        params["owner"] = owner
    return int(conn.execute(_delete_many(owner is not None), params).rowcount or 0)


def existing(conn: Connection, ids: Iterable[int]) -> set[int]:
    wanted = list(set(ids))
    if not wanted:
        return set()
    return {r.id for r in conn.execute(select(tr.id).where(tr.id.in_(wanted))).all()}


@functools.cache
def _get_many() -> Any:
    return (select(tr.id, tr.classpath, tr.kwargs, tr.created_date, tr.triggerer_id)
            .where(tr.id.in_(bindparam("ids", expanding=True))).order_by(tr.id))


def get_many(conn: Connection, ids: Iterable[int]) -> list[Any]:
    wanted = list(set(ids))
    if not wanted:
        return []
    return list(conn.execute(_get_many(), {"ids": wanted}).all())


@functools.cache
def _assigned_to() -> Any:
    return select(tr.id).where(tr.triggerer_id == bindparam("triggerer_id"))


def assigned_to(conn: Connection, triggerer_id: int) -> set[int]:
    return set(conn.execute(_assigned_to(), {"triggerer_id": triggerer_id}).scalars())


def claim(
    conn: Connection, triggerer_id: int, *, limit: int, heartbeat_after: datetime
) -> list[Any]:
    """Assign up to ``limit`` triggers to ``triggerer_id``: unassigned ones, and ones whose
    triggerer is stopped or has not heartbeated since ``heartbeat_after``. Only triggers a
    deferred task instance waits on are taken, lowest ids first. Rows are locked with ``FOR
    UPDATE SKIP LOCKED`` on PostgreSQL, so concurrent triggerers never take the same one.

    Returns ``(id, classpath, kwargs, previous triggerer_id)`` of each claimed trigger.
    """
    if limit <= 0:
        return []
    alive = _alive_triggerers(conn, heartbeat_after)
    columns = (tr.id, tr.classpath, tr.kwargs, tr.triggerer_id)
    parts: list[list[Any]] = []
    # The unassigned and the orphaned, each read by the ``triggerer_id`` index, the lowest
    # ``limit`` of both kept: what one read ordered by id would give, but without reading
    # (on every claim) each trigger that a live triggerer holds.
    # (The orphans are sorted by ``id + 0``: by ``id`` itself, SQLite would scan the table in
    # id order rather than read the index and sort the few it finds.)
    for where, order in ((tr.triggerer_id.is_(None), tr.id),
                         (_held_by_none_of(alive), tr.id + 0)):
        stmt = select(*columns).where(where, _waited_on()).order_by(order).limit(limit)
        if is_postgres(conn):
            stmt = stmt.with_for_update(skip_locked=True, of=trigger)
        parts.append(list(conn.execute(stmt).all()))
    # (Rows by index, not by name: a claim handles 1,000 of them.)
    rows = (sorted(parts[0] + parts[1], key=_first)[:limit] if parts[0] and parts[1]
            else parts[0] or parts[1])
    if rows:
        conn.execute(_claim_update(), {"ids": [r[0] for r in rows], "owner": triggerer_id})
    return rows


def _first(row: Any) -> Any:
    return row[0]


@functools.cache
def _claim_update() -> Any:
    return (update(trigger).where(tr.id.in_(bindparam("ids", expanding=True)))
            .values(triggerer_id=bindparam("owner")))


def _alive_triggerers(conn: Connection, heartbeat_after: datetime) -> list[int]:
    return sorted(conn.execute(select(job.c.id).where(
        job.c.job_type == TRIGGERER_JOB, job.c.status == "running",
        job.c.latest_heartbeat > heartbeat_after)).scalars())


def _held_by_none_of(alive: Sequence[int]) -> Any:
    """Assigned to a triggerer not in ``alive`` (sorted): the ranges of ``triggerer_id`` around
    the live ones, which an index reads without visiting their triggers (``NOT IN`` does)."""
    if not alive:
        return tr.triggerer_id.is_not(None)
    ranges = [tr.triggerer_id < alive[0], tr.triggerer_id > alive[-1]]
    ranges += [and_(tr.triggerer_id > lo, tr.triggerer_id < hi)
               for lo, hi in itertools.pairwise(alive)]
    return or_(*ranges)


def _waited_on() -> Any:
    return exists(select(ti.id).where(ti.trigger_id == tr.id, ti.state == _DEFERRED))


def any_claimable(conn: Connection, *, heartbeat_after: datetime) -> bool:
    """Is there a trigger ``claim`` would take? (A read: no lock, no change.)"""
    alive = _alive_triggerers(conn, heartbeat_after)
    return any(
        conn.execute(select(tr.id).where(where, _waited_on()).limit(1)).first() is not None
        for where in (tr.triggerer_id.is_(None), _held_by_none_of(alive)))


def release(conn: Connection, triggerer_id: int, ids: Iterable[int] | None = None) -> int:
    """Unassign the triggers of ``triggerer_id`` (all, or ``ids``) for others to claim."""
    stmt = update(trigger).where(tr.triggerer_id == triggerer_id)
    if ids is not None:
        wanted = list(set(ids))
        if not wanted:
            return 0
        stmt = stmt.where(tr.id.in_(wanted))
    return int(conn.execute(stmt.values(triggerer_id=None)).rowcount or 0)


# -- the task instances waiting on triggers -------------------------------------------------


def _waiting_columns() -> list[Any]:
    return [ti.id, ti.try_number, ti.trigger_id, ti.next_kwargs, ti.next_method, ti.dag_id,
            ti.task_id, ti.run_id, ti.dag_run_id, ti.start_date, ti.hostname, ti.pid]


@functools.cache
def _deferred_on(postgres: bool, owned: bool) -> Any:
    stmt = select(*_waiting_columns()).where(
        ti.trigger_id.in_(bindparam("ids", expanding=True)), ti.state == _DEFERRED)
    if owned:
        stmt = stmt.join(trigger, tr.id == ti.trigger_id).where(
            tr.triggerer_id == bindparam("owner"))
    return stmt.with_for_update(of=task_instance) if postgres else stmt


def deferred_on(conn: Connection, trigger_ids: Iterable[int], *,
                owner: int | None = None) -> list[Any]:
    """Deferred task instances waiting on ``trigger_ids`` (locked on PostgreSQL); with
    ``owner``, only on those of the triggers assigned to that triggerer."""
    wanted = list(set(trigger_ids))
    if not wanted:
        return []
    params: dict[str, Any] = {"ids": wanted}
    if owner is not None:
        params["owner"] = owner
    return list(conn.execute(_deferred_on(is_postgres(conn), owner is not None),
                             params).all())


def timed_out(conn: Connection, now: datetime, limit: int = 1000) -> list[Any]:
    """Deferred task instances whose ``trigger_timeout`` has passed (locked, skipping rows
    another triggerer holds, on PostgreSQL)."""
    stmt = (
        select(*_waiting_columns())
        .where(ti.state == _DEFERRED, ti.trigger_timeout.is_not(None), ti.trigger_timeout < now)
        .order_by(ti.trigger_timeout)
        .limit(limit)
    )
    if is_postgres(conn):
        stmt = stmt.with_for_update(skip_locked=True, of=task_instance)
    return list(conn.execute(stmt).all())


def set_next_kwargs(conn: Connection, rows: Sequence[tuple[int, Any]]) -> None:
    """``next_kwargs`` of each task instance ``(id, data)``, in one executemany."""
    if not rows:
        return
    conn.execute(_set_next_kwargs(), [{"b_id": pk, "b_kwargs": data} for pk, data in rows])


@functools.cache
def _set_next_kwargs() -> Any:
    return (update(task_instance).where(ti.id == bindparam("b_id"))
            .values(next_kwargs=bindparam("b_kwargs")))


# -- clean-up -----------------------------------------------------------------------------


def clear_stale_references(conn: Connection) -> int:
    """``trigger_id`` of task instances that are no longer deferred (cleared, removed, …)."""
    res = conn.execute(
        update(task_instance)
        .where(ti.trigger_id.is_not(None), ti.state != _DEFERRED)
        .values(trigger_id=None)
    )
    return int(res.rowcount or 0)


def clear_stale_resume_fields(conn: Connection) -> int:
    """Resume and reschedule fields of task instances back in ``none`` (cleared): a new try
    starts from ``execute``, not from a method or a reschedule of the old one."""
    res = conn.execute(
        update(task_instance)
        .where(ti.state == TI.NONE.value,
               or_(ti.next_method.is_not(None), ti.first_poke_at.is_not(None)))
        .values(next_method=None, next_kwargs=None, trigger_timeout=None, first_poke_at=None,
                poke_count=0, reschedule_date=None)
    )
    return int(res.rowcount or 0)


def delete_unreferenced(conn: Connection) -> list[Any]:
    """Delete triggers that no deferred task instance waits on; returns what was deleted."""
    rows = list(conn.execute(
        select(tr.id, tr.classpath, tr.triggerer_id).where(~_waited_on())
    ).all())
    if rows:
        conn.execute(delete(trigger).where(tr.id.in_([r.id for r in rows])))
    return rows


# -- reading ----------------------------------------------------------------------------------


def list_with_task_instances(conn: Connection, limit: int = 100, *,
                             triggerer_id: int | None = None) -> list[Any]:
    """Triggers with the task instance waiting on each and the triggerer running it (only
    those of one triggerer with ``triggerer_id``)."""
    stmt = (
        select(tr.id, tr.classpath, tr.created_date, tr.triggerer_id,
               ti.dag_id, ti.task_id, ti.run_id, ti.state, ti.try_number, ti.trigger_timeout,
               job.c.hostname.label("triggerer_hostname"),
               job.c.latest_heartbeat.label("triggerer_heartbeat"),
               job.c.status.label("triggerer_status"))
        .select_from(trigger)
        .outerjoin(task_instance, ti.trigger_id == tr.id)
        .outerjoin(job, job.c.id == tr.triggerer_id)
        .order_by(tr.created_date, tr.id)
        .limit(limit)
    )
    if triggerer_id is not None:
        stmt = stmt.where(tr.triggerer_id == triggerer_id)
    return list(conn.execute(stmt).all())


def count_by_triggerer(conn: Connection) -> dict[int | None, int]:
    rows = conn.execute(select(tr.triggerer_id, func.count()).group_by(tr.triggerer_id)).all()
    return {r[0]: int(r[1]) for r in rows}


def any_kwargs(conn: Connection) -> str | None:
    """The encrypted kwargs of one stored trigger (to check the key at start), or None."""
    row = conn.execute(select(tr.kwargs).order_by(tr.id.desc()).limit(1)).first()
    return None if row is None else str(row.kwargs)


def deferred_count(conn: Connection) -> int:
    return int(conn.execute(
        select(func.count()).select_from(task_instance).where(ti.state == _DEFERRED)
    ).scalar_one())


def set_deferral_fields(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Before a running try moves to deferred: ``trigger_id``, ``next_method``,
    ``next_kwargs`` and ``trigger_timeout`` of each ``{id, try_number, …}`` (only while that try
    is still running; the state itself changes through the door)."""
    if not rows:
        return
    conn.execute(
        update(task_instance)
        .where(ti.id == bindparam("b_id"), ti.try_number == bindparam("b_try"),
               ti.state == TI.RUNNING.value)
        .values(trigger_id=bindparam("b_trigger"), next_method=bindparam("b_method"),
                next_kwargs=bindparam("b_kwargs"), trigger_timeout=bindparam("b_timeout")),
        [{"b_id": r["id"], "b_try": r["try_number"], "b_trigger": r["trigger_id"],
          "b_method": r["next_method"], "b_kwargs": r["next_kwargs"],
          "b_timeout": r["trigger_timeout"]} for r in rows],
    )


def external_states(
    conn: Connection, dag_id: str, task_ids: Sequence[str] | None,
    logical_dates: Sequence[datetime],
) -> list[str]:
    """States of the task instances ``task_ids`` (or of the runs, when None) of ``dag_id``'s
    runs at ``logical_dates``: what ``ExternalTaskTrigger`` waits on (read-only)."""
    from statewright.db.tables import dag_run

    dates = list(logical_dates)
    if not dates:
        return []
    runs = (dag_run.c.dag_id == dag_id) & dag_run.c.logical_date.in_(dates)
    if task_ids is None:
        return [r.state for r in conn.execute(select(dag_run.c.state).where(runs)).all()]
    rows = conn.execute(
        select(ti.state).join(dag_run, dag_run.c.id == ti.dag_run_id)
        .where(runs, ti.task_id.in_(list(task_ids)))
    ).all()
    return [r.state for r in rows]


def external_group_states(
    conn: Connection, dag_id: str, group_id: str, logical_dates: Sequence[datetime],
) -> list[list[str]]:
    """For each run of ``dag_id`` at ``logical_dates``, the states of the task instances of the
    tasks in its task group ``group_id`` (nested groups included; the DAG's current version);
    no run when the DAG or the group is unknown (read-only)."""
    from statewright.db.repositories.dags import get_serialized
    from statewright.db.tables import dag_run

    serialized = get_serialized(conn, dag_id)
    task_ids = group_task_ids(serialized, group_id) if serialized is not None else []
    if not task_ids or not logical_dates:
        return []
    rows = conn.execute(
        select(dag_run.c.id, ti.state).join(dag_run, dag_run.c.id == ti.dag_run_id)
        .where(dag_run.c.dag_id == dag_id, dag_run.c.logical_date.in_(list(logical_dates)),
               ti.task_id.in_(task_ids))
    ).all()
    by_run: dict[int, list[str]] = {}
    for run_id, state in rows:
        by_run.setdefault(run_id, []).append(state)
    return list(by_run.values())
