"""Queries on ``task_instance`` (reads and non-state columns; states go through the door)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import (
    Connection,
    and_,
    bindparam,
    func,
    null,
    or_,
    select,
    text,
    tuple_,
    union_all,
    update,
)

from statewright.core.states import TI
from statewright.db.bulk import insert_many
from statewright.db.repositories import dag_versions
from statewright.db.repositories.dags import hash_column
from statewright.db.repositories.prev_runs import PREV_SUCCESS_KEYS
from statewright.db.tables import (
    dag_run,
    state_transition,
    task_instance,
    task_instance_history,
)

ti = task_instance.c


class SchedulingRow(NamedTuple):
    """What the scheduler's evaluation reads of a task instance (a plain tuple: a big run's
    evaluation reads these fields tens of thousands of times, ten times faster than a row's)."""

    id: int
    dag_run_id: int
    task_id: str
    map_index: int
    state: str
    try_number: int
    next_retry_at: datetime | None
    reschedule_date: datetime | None


def for_runs(conn: Connection, run_ids: Sequence[int]) -> list[SchedulingRow]:
    """The scheduling view of every task instance of the given runs: what the evaluation reads
    (read for every task instance of a run when it is read whole: no column more), in the
    order of run, task and map index."""
    if not run_ids:
        return []
    return list(map(SchedulingRow._make, conn.execute(
        select(*_scheduling_columns())
        .where(ti.dag_run_id.in_(list(run_ids)))
        .order_by(ti.dag_run_id, ti.task_id, ti.map_index)
    ).all()))


def _scheduling_columns() -> list[Any]:
    return [ti.id, ti.dag_run_id, ti.task_id, ti.map_index, ti.state, ti.try_number,
            ti.next_retry_at, ti.reschedule_date]


def changed_since(conn: Connection, after_id: int, also: Sequence[int] = (), *, limit: int
                  ) -> list[tuple[int, SchedulingRow | None]]:
    """History rows above ``after_id`` (and those of the ids ``also``), oldest first, at most
    ``limit``: each its id and, for a task instance's row, that task instance's scheduling view
    now (``for_runs``; ``None`` for a DAG run's row)."""
    params: dict[str, Any] = {"after": after_id, "limit": limit}
    if also:
        params["also"] = list(also)
    rows = conn.execute(_changed_since(bool(also)), params).all()
    return [(r[0], None if r[1] is None else SchedulingRow._make(r[1:])) for r in rows]


@functools.cache
def _changed_since(with_also: bool) -> Any:
    st = state_transition.c
    since = st.id > bindparam("after")
    if with_also:
        since = or_(since, st.id.in_(bindparam("also", expanding=True)))
    return (select(st.id, *_scheduling_columns())
            .select_from(state_transition.outerjoin(
                task_instance, and_(st.entity == "task_instance", ti.id == st.entity_id)))
            .where(since).order_by(st.id).limit(bindparam("limit")))


def history_ids_near_top(conn: Connection, window: int) -> list[int]:
    """The ids of the newest ``window`` history ids' range (``max - window`` exclusive to
    ``max``) that exist now: where a reader of the history starts, and which ids below it
    it has not seen (transactions not yet committed)."""
    st = state_transition.c
    top = select(func.max(st.id)).scalar_subquery()
    return [r[0] for r in conn.execute(
        select(st.id).where(st.id > top - window).order_by(st.id)).all()]


def state_counts_by_run(conn: Connection, run_ids: Sequence[int]) -> dict[int, dict[str, int]]:
    if not run_ids:
        return {}
    out: dict[int, dict[str, int]] = {}
    for run_pk, state, n in conn.execute(_state_counts(), {"ids": list(run_ids)}).all():
        out.setdefault(run_pk, {})[state] = int(n)
    return out


@functools.cache
def _state_counts() -> Any:
    return (select(ti.dag_run_id, ti.state, func.count())
            .where(ti.dag_run_id.in_(bindparam("ids", expanding=True)))
            .group_by(ti.dag_run_id, ti.state))


def runs_in_states(conn: Connection, run_ids: Sequence[int], states: Iterable[str]
                   ) -> dict[int, set[str]]:
    """Per run, which of ``states`` some of its task instances are in (runs with none left
    out). Reads only the task instances in those states, whatever else the runs hold."""
    if not run_ids:
        return {}
    if conn.dialect.name == "postgresql":
        rows = conn.execute(_PG_STATE_PROBES, {"ids": list(run_ids), "states": list(states)})
    else:
        rows = conn.execute(_runs_in_states(), {"ids": list(run_ids), "states": list(states)})
    out: dict[int, set[str]] = {}
    for run_pk, state in rows.all():
        out.setdefault(run_pk, set()).add(state)
    return out


# One probe per (run, state), each the first entry of ``ix_task_instance_queue_order`` for that
# pair. Written so that PostgreSQL's planner takes that index whatever its statistics say: they
# lag behind a big run's states (all ``none``, then all ``scheduled``, then all ``success``
# within seconds), and the plain ``DISTINCT … WHERE state IN … AND dag_run_id IN …`` was then
# read through the run's whole index range or a sequential scan: 4-6 ms per pass at 10,000
# task instances, the scheduler's biggest cost on PostgreSQL. The ``ORDER BY`` is the index's
# own order after the two equalities, so only that index serves it without a sort.
_PG_STATE_PROBES = text(
    "SELECT r.id, s.state FROM unnest(CAST(:ids AS integer[])) AS r(id) "
    "CROSS JOIN unnest(CAST(:states AS varchar[])) AS s(state) "
    "CROSS JOIN LATERAL (SELECT 1 FROM task_instance AS t "
    "WHERE t.state = s.state AND t.dag_run_id = r.id "
    "ORDER BY t.priority_weight DESC, t.id LIMIT 1) AS hit")


def run_probes(conn: Connection, run_ids: Sequence[int], present: Sequence[str],
               busy: Sequence[str]) -> tuple[dict[int, set[str]], set[int]]:
    """``runs_in_states(present)`` and ``runs_without_states(busy)`` at once, in one statement:
    on PostgreSQL one set of index probes for both; on SQLite the two reads joined by ``UNION
    ALL`` (there ``runs_in_states`` reads every task instance in those states: fine for the
    few waiting, not for the busy ones, whose runs are probed per run)."""
    if not run_ids:
        return {}, set()
    if conn.dialect.name != "postgresql":
        ids = list(run_ids)
        found: dict[int, set[str]] = {}
        idle: set[int] = set()
        for run_pk, state in conn.execute(_sqlite_run_probes(), {
                "ids": ids, "ids_idle": ids, "states": list(present),
                "states_idle": list(busy)}).all():
            if state is None:
                idle.add(run_pk)
            else:
                found.setdefault(run_pk, set()).add(state)
        return found, idle
    found = runs_in_states(conn, run_ids, [*present, *busy])
    want, held = set(present), set(busy)
    return ({r: s & want for r, s in found.items() if s & want},
            {r for r in run_ids if not found.get(r, set()) & held})


def runs_without_states(conn: Connection, run_ids: Sequence[int], states: Iterable[str]
                        ) -> set[int]:
    """The runs none of whose task instances is in ``states`` (one probe per run)."""
    if not run_ids:
        return set()
    if conn.dialect.name == "postgresql":
        return set(run_ids) - set(runs_in_states(conn, run_ids, states))
    return set(conn.execute(_runs_without_states(), {"ids": list(run_ids),
                                                     "states": list(states)}).scalars().all())


@functools.cache
def _runs_in_states() -> Any:
    """Built once: the scheduler's probe runs it on every pass."""
    return (select(ti.dag_run_id, ti.state).distinct()
            .where(ti.state.in_(bindparam("states", expanding=True)),
                   ti.dag_run_id.in_(bindparam("ids", expanding=True))))


@functools.cache
def _sqlite_run_probes() -> Any:
    """``_runs_in_states`` (run, state) and ``_runs_without_states`` (run, NULL) in one."""
    run = dag_run.c
    held = select(ti.id).where(ti.dag_run_id == run.id,
                               ti.state.in_(bindparam("states_idle", expanding=True))).exists()
    idle = select(run.id, null()).where(run.id.in_(bindparam("ids_idle", expanding=True)),
                                        ~held)
    return union_all(_runs_in_states(), idle)


@functools.cache
def _runs_without_states() -> Any:
    run = dag_run.c
    held = select(ti.id).where(ti.dag_run_id == run.id,
                               ti.state.in_(bindparam("states", expanding=True))).exists()
    return select(run.id).where(run.id.in_(bindparam("ids", expanding=True)), ~held)


def count_active_by_dag(conn: Connection, dag_ids: Iterable[str]) -> dict[str, int]:
    """Queued or running task instances per DAG (for max_active_tasks)."""
    ids = list(set(dag_ids))
    if not ids:
        return {}
    rows = conn.execute(
        select(ti.dag_id, func.count())
        .where(ti.dag_id.in_(ids), ti.state.in_([TI.QUEUED.value, TI.RUNNING.value]))
        .group_by(ti.dag_id)
    ).all()
    return {r[0]: int(r[1]) for r in rows}


def scheduled_to_queue(conn: Connection, limit: int) -> list[Any]:
    """Scheduled task instances of running runs, highest priority first."""
    return list(conn.execute(
        select(ti.id, ti.dag_id, ti.run_id, ti.task_id, ti.map_index, ti.dag_run_id,
               ti.try_number, ti.priority_weight, ti.pool, ti.pool_slots)
        .join(dag_run, dag_run.c.id == ti.dag_run_id)
        .where(ti.state == TI.SCHEDULED.value, dag_run.c.state == "running")
        .order_by(ti.priority_weight.desc(), ti.scheduled_at, ti.id)
        .limit(limit)
    ).all())


@functools.cache
def _workloads(dialect: str) -> Any:
    # One statement for what starting a try reads: the task instance, its run, its DAG's hash
    # (from the covering index, as ``dags.get_hashes``) and the DAG's previous successful run
    # (the ``prev_*_success`` context keys). On PostgreSQL each statement is a round trip on
    # the path from queued to running.
    earlier = dag_run.alias("earlier")
    prev = dag_run.alias("prev")
    prev_id = (select(earlier.c.id)
               .where(earlier.c.dag_id == dag_run.c.dag_id, earlier.c.state == "success",
                      earlier.c.logical_date < dag_run.c.logical_date)
               .order_by(earlier.c.logical_date.desc()).limit(1).scalar_subquery())
    return (select(ti.id, ti.dag_id, ti.run_id, ti.task_id, ti.map_index, ti.dag_run_id,
                   ti.try_number, ti.max_tries, ti.next_method, ti.next_kwargs, ti.state,
                   ti.first_poke_at, ti.poke_count,
                   dag_run.c.logical_date, dag_run.c.data_interval_start,
                   dag_run.c.data_interval_end, dag_run.c.conf, dag_run.c.run_type,
                   dag_run.c.partition_key, dag_run.c.partition_date,
                   hash_column(dialect, ti.dag_id).label("dag_hash"),
                   *(getattr(prev.c, column).label(key)
                     for key, column in PREV_SUCCESS_KEYS.items()))
            .join(dag_run, dag_run.c.id == ti.dag_run_id)
            .outerjoin(prev, prev.c.id == prev_id)
            .where(ti.id.in_(bindparam("ids", expanding=True))))


def workloads(conn: Connection, ids: Sequence[int]) -> list[Any]:
    """Everything a worker needs to run a try, joined with its run: also ``dag_hash`` (its
    DAG's) and the ``prev_*_success`` values (``prev_runs.PREV_SUCCESS_KEYS``: those of the
    DAG's latest successful run with an earlier logical date; None when there is none)."""
    if not ids:
        return []
    return list(conn.execute(_workloads(conn.dialect.name), {"ids": list(ids)}).all())


def set_rendered_map_indexes(conn: Connection, names: Mapping[int, str]) -> None:
    """The names ``map_index_template`` gave mapped task instances (task instance → name)."""
    if names:
        conn.execute(update(task_instance).where(ti.id == bindparam("b_id")).values(
            rendered_map_index=bindparam("b_name")),
            [{"b_id": k, "b_name": v} for k, v in names.items()])


def still_running(conn: Connection, pairs: Sequence[tuple[int, int]]) -> set[tuple[int, int]]:
    """Which of the tries ``(id, try_number)`` their task instances still run."""
    return {(r.id, r.try_number) for r in conn.execute(
        select(ti.id, ti.try_number).where(tuple_(ti.id, ti.try_number).in_(list(pairs)),
                                           ti.state == TI.RUNNING.value))}


def heartbeat(conn: Connection, pairs: Sequence[tuple[int, int]], now: datetime) -> int:
    """Touch last_heartbeat_at of running tries (id, try_number)."""
    if not pairs:
        return 0
    res = conn.execute(
        update(task_instance)
        .where(tuple_(ti.id, ti.try_number).in_(list(pairs)), ti.state == TI.RUNNING.value)
        .values(last_heartbeat_at=now)
    )
    return int(res.rowcount or 0)


def set_worker_fields(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """hostname, pid, worker_id of freshly started tries: [{id, hostname, pid, worker_id}]."""
    for r in rows:
        conn.execute(update(task_instance).where(ti.id == r["id"]).values(
            hostname=r["hostname"], pid=r["pid"], worker_id=r.get("worker_id")))


def zombies(conn: Connection, older_than: datetime) -> list[Any]:
    return list(conn.execute(
        select(ti.id, ti.try_number, ti.max_tries, ti.dag_id, ti.task_id, ti.dag_run_id,
               ti.start_date, ti.pid)
        .where(ti.state == TI.RUNNING.value, ti.last_heartbeat_at < older_than)
    ).all())


def running_on_host(conn: Connection, hostname: str) -> list[Any]:
    return list(conn.execute(
        select(ti.id, ti.try_number, ti.max_tries, ti.dag_id, ti.task_id, ti.dag_run_id, ti.pid)
        .where(ti.state == TI.RUNNING.value, ti.hostname == hostname)
    ).all())


def queued_by_executor_prefix(conn: Connection, prefix: str) -> list[Any]:
    return list(conn.execute(
        select(ti.id, ti.try_number, ti.executor)
        .where(ti.state == TI.QUEUED.value, ti.executor.startswith(prefix))
    ).all())


def queued_too_long(conn: Connection, older_than: datetime) -> list[Any]:
    return list(conn.execute(
        select(ti.id, ti.try_number).where(ti.state == TI.QUEUED.value, ti.queued_at < older_than)
    ).all())


def by_run(conn: Connection, dag_run_id: int) -> list[Any]:
    return list(conn.execute(
        select(task_instance).where(ti.dag_run_id == dag_run_id).order_by(ti.id)
    ).all())


def get(conn: Connection, pk: int) -> Any:
    return conn.execute(select(task_instance).where(ti.id == pk)).first()


def get_by_key(conn: Connection, dag_run_id: int, task_id: str, map_index: int = -1) -> Any:
    """The task instance ``(dag run, task id, map index)`` (a mapped task not yet expanded has
    only its map index -1 instance)."""
    return conn.execute(
        select(task_instance).where(ti.dag_run_id == dag_run_id, ti.task_id == task_id,
                                    ti.map_index == map_index)
    ).first()


def mapped_instances(conn: Connection, dag_run_id: int, task_id: str) -> list[Any]:
    """Every task instance of one task of a run, by map index."""
    return list(conn.execute(
        select(task_instance).where(ti.dag_run_id == dag_run_id, ti.task_id == task_id)
        .order_by(ti.map_index)
    ).all())


def add_history(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Finished tries; each records the DAG version its task instance ran."""
    if rows:
        versions = dag_versions.versions_of_tries(
            conn, [r["task_instance_id"] for r in rows if "dag_version_id" not in r])
        groups: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}  # rows by their columns
        for r in rows:
            row = r if "dag_version_id" in r else {
                **r, "dag_version_id": versions.get(r["task_instance_id"])}
            groups.setdefault(tuple(row), []).append(tuple(row.values()))
        for columns, values in groups.items():
            insert_many(conn, task_instance_history, columns, values)


def history_of(conn: Connection, task_instance_id: int) -> list[Any]:
    return list(conn.execute(
        select(task_instance_history)
        .where(task_instance_history.c.task_instance_id == task_instance_id)
        .order_by(task_instance_history.c.try_number)
    ).all())
