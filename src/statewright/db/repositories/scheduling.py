"""Queries of the scheduler's scheduling steps: due DAGs, run limits, queueing candidates,
the previous run of depends_on_past, and Late runs and task instances."""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    and_,
    bindparam,
    func,
    literal_column,
    not_,
    or_,
    select,
    true,
    tuple_,
)

from statewright.core.states import RUN, TI, StateName
from statewright.db.bulk import chunks, update_many
from statewright.db.tables import dag, dag_run, task_instance

ti = task_instance.c
dr = dag_run.c

#: Run types that count against a DAG's own ``max_active_runs`` (backfills have their own).
_ACTIVE_RUN_STATES = (RUN.QUEUED.value, RUN.RUNNING.value)
BACKFILL = "backfill"


# -- run creation ---------------------------------------------------------------------------


def _active_runs_of_dag() -> Any:
    return (
        select(func.count())
        .select_from(dag_run)
        .where(dr.dag_id == dag.c.dag_id, dr.state.in_(_ACTIVE_RUN_STATES),
               dr.run_type != BACKFILL)
        .scalar_subquery()
    )


def _due(now: datetime) -> Any:
    return and_(
        dag.c.is_paused.is_(False),
        dag.c.is_active.is_(True),
        dag.c.next_dagrun_create_after.is_not(None),
        dag.c.next_dagrun_create_after <= now,
        _active_runs_of_dag() < dag.c.max_active_runs,
    )


def any_due_dag(conn: Connection, now: datetime) -> bool:
    return conn.execute(due_dag_query(now).limit(1)).first() is not None


def due_dag_query(now: datetime) -> Any:
    """The DAGs whose next run is due (a query for an ``EXISTS``)."""
    return select(dag.c.dag_id).where(_due(now))


def lock_due_dags(conn: Connection, now: datetime, limit: int) -> list[Any]:
    """Unpaused active DAGs whose next run is due and below ``max_active_runs``, oldest first.

    The rows are locked (``FOR UPDATE SKIP LOCKED`` on PostgreSQL) until the transaction ends,
    so two schedulers never handle the same DAG at once.
    """
    stmt = (
        select(dag.c.dag_id, dag.c.dag_hash, dag.c.next_dagrun,
               dag.c.next_dagrun_data_interval_start, dag.c.next_dagrun_data_interval_end,
               dag.c.next_dagrun_create_after)
        .where(_due(now))
        .order_by(dag.c.next_dagrun_create_after, dag.c.dag_id)
        .limit(limit)
        .with_for_update(of=dag, skip_locked=True)
    )
    return list(conn.execute(stmt).all())


def existing_runs(
    conn: Connection, wanted: Collection[tuple[str, str, datetime]]
) -> tuple[set[tuple[str, str]], set[tuple[str, datetime]]]:
    """Of (dag_id, run_id, logical_date) triples: the run ids and logical dates already taken."""
    by_id: set[tuple[str, str]] = set()
    by_date: set[tuple[str, datetime]] = set()
    triples = list(wanted)
    run_ids = sorted({r for _, r, _ in triples})
    dates = sorted({t for _, _, t in triples})
    for chunk in chunks(sorted({d for d, _, _ in triples}), 500):
        for dag_id, run_id in conn.execute(
            select(dr.dag_id, dr.run_id).where(dr.dag_id.in_(chunk), dr.run_id.in_(run_ids))
        ).all():
            by_id.add((dag_id, run_id))
        for dag_id, logical_date in conn.execute(
            select(dr.dag_id, dr.logical_date).where(dr.dag_id.in_(chunk),
                                                     dr.logical_date.in_(dates))
        ).all():
            by_date.add((dag_id, logical_date))
    return by_id, by_date


def set_next_dagruns(conn: Connection, values: Mapping[str, Mapping[str, Any]]) -> None:
    """dag_id → the four ``next_dagrun*`` columns; one executemany."""
    columns = ("next_dagrun", "next_dagrun_data_interval_start",
               "next_dagrun_data_interval_end", "next_dagrun_create_after")
    update_many(conn, dag, "dag_id", columns,
                [(dag_id, *(v[c] for c in columns)) for dag_id, v in values.items()])


def latest_automated_runs(conn: Connection, dag_ids: Iterable[str]) -> dict[str, Any]:
    """dag_id → its scheduled or backfill run with the latest logical date."""
    ids = list(set(dag_ids))
    out: dict[str, Any] = {}
    for chunk in chunks(ids, 400):
        latest = (
            select(dr.dag_id, func.max(dr.logical_date).label("logical_date"))
            .where(dr.dag_id.in_(chunk), dr.run_type.in_(("scheduled", BACKFILL)),
                   dr.logical_date.is_not(None))
            .group_by(dr.dag_id)
            .subquery()
        )
        rows = conn.execute(
            select(dr.dag_id, dr.logical_date, dr.data_interval_start, dr.data_interval_end,
                   dr.run_after)
            .join(latest, and_(latest.c.dag_id == dr.dag_id,
                               latest.c.logical_date == dr.logical_date))
            .where(dr.run_type.in_(("scheduled", BACKFILL)))
        ).all()
        for row in rows:
            out[row.dag_id] = row
    return out


# -- queueing -------------------------------------------------------------------------------


def queue_candidates(
    conn: Connection,
    limit: int,
    *,
    skip_pools: Collection[str] = (),
    skip_runs: Collection[int] = (),
    skip_tasks: Collection[tuple[str, str]] = (),
) -> list[Any]:
    """Scheduled task instances of running runs of unpaused DAGs, highest priority first.

    Ties go to the run with the earlier logical date (Airflow's order), then the older row.
    Each run's first ``limit`` (by priority, then id) are read from the index
    ``ix_task_instance_queue_order`` and only those are sorted: the cost follows ``limit`` and
    the number of running runs, not the number of scheduled task instances.
    """
    dialect = conn.dialect.name
    if not (skip_pools or skip_runs or skip_tasks):
        return list(conn.execute(_candidates(dialect), {"limit": limit}).all())
    first = _first_of_run()
    if skip_pools:
        first = first.where(ti2.pool.not_in(list(skip_pools)))
    if skip_tasks:
        first = first.where(not_(tuple_(ti2.dag_id, ti2.task_id).in_(list(skip_tasks))))
    stmt = _candidates_over(first, dialect)
    if skip_runs:
        stmt = stmt.where(dr.id.not_in(list(skip_runs)))
    return list(conn.execute(stmt, {"limit": limit}).all())


_ti2 = task_instance.alias("first_ti")
ti2 = _ti2.c
_CANDIDATE_COLUMNS = ("id", "dag_id", "run_id", "task_id", "dag_run_id", "try_number",
                      "priority_weight", "pool", "pool_slots")


def _first_of_run() -> Any:
    """The first scheduled task instances of the outer query's run, in queueing order."""
    return (select(*(ti2[c] for c in _CANDIDATE_COLUMNS))
            .where(ti2.dag_run_id == dr.id, ti2.state == TI.SCHEDULED.value)
            .order_by(ti2.priority_weight.desc(), ti2.id)
            .limit(bindparam("limit")))


def _candidates_over(first_of_run: Any, dialect: str) -> Any:
    """Each running run's first candidates, then the best ``limit`` of them. PostgreSQL reads
    each run's first ones with a LATERAL join; SQLite (no LATERAL) with ``id IN`` a correlated
    subquery, which it runs once per run (PostgreSQL would run it once per row)."""
    runs = dag_run.join(dag, dag.c.dag_id == dr.dag_id)
    if dialect == "postgresql":
        first = first_of_run.correlate(dag_run).lateral("first_of_run")
        cols, source = first.c, runs.join(first, true())
    else:
        first_ids = first_of_run.with_only_columns(ti2.id).correlate(dag_run)
        cols, source = ti, runs.join(task_instance, ti.id.in_(first_ids))
    return (
        select(*(cols[c] for c in _CANDIDATE_COLUMNS))
        .select_from(source)
        .where(dr.state == RUN.RUNNING.value, dag.c.is_paused.is_(False))
        .order_by(cols.priority_weight.desc(), dr.logical_date, cols.id)
        .limit(bindparam("limit"))
    )


@functools.cache
def _candidates(dialect: str) -> Any:
    # Read on every queueing pass: built once (with the limit bound) for the common case.
    return _candidates_over(_first_of_run(), dialect)


def any_queue_candidate(conn: Connection) -> bool:
    return bool(queue_candidates(conn, 1))


def lock_unheld(conn: Connection, ti_ids: Collection[int]) -> list[int]:
    """Of these task instances, the ones whose rows this transaction could lock at once (held
    until it ends); a row another transaction holds is left out, not waited for. Everything
    on SQLite (its one writer holds the file)."""
    if conn.dialect.name != "postgresql" or not ti_ids:
        return list(ti_ids)
    held: set[int] = set()
    for chunk in chunks(sorted(ti_ids), 1000):
        held.update(conn.execute(_LOCK_UNHELD, {"ids": chunk}).scalars())
    return [i for i in ti_ids if i in held]


_LOCK_UNHELD = (select(ti.id).where(ti.id.in_(bindparam("ids", expanding=True)))
                .order_by(ti.id).with_for_update(skip_locked=True))


def active_by_run(conn: Connection, run_pks: Collection[int]) -> dict[int, int]:
    """Queued or running task instances per run (for ``max_active_tasks``)."""
    out: dict[int, int] = {}
    for chunk in chunks(list(set(run_pks)), 400):
        for run_pk, n in conn.execute(_active_by_run(conn.dialect.name), {"ids": chunk}).all():
            out[run_pk] = int(n)
    return out


@functools.cache
def _active_by_run(dialect: str) -> Any:
    """On PostgreSQL the count reads the queued and running task instances (at most the
    executors' slots) through an index that starts with the state, the run compared as
    ``dag_run_id + 0``, which no index serves. Otherwise its planner, whose statistics of a busy
    table are always older than its states, reads the run's rows through the unique index on
    ``(dag_run_id, task_id, map_index)`` and filters every one by state: each queueing pass read
    the whole run (3,000 rows a pass at 3,000; 100,000 at 100,000). SQLite, without statistics,
    takes ``(state, dag_run_id)`` from ``ix_task_instance_queue_order`` as it is."""
    run = ti.dag_run_id + literal_column("0") if dialect == "postgresql" else ti.dag_run_id
    return (select(ti.dag_run_id, func.count())
            .where(run.in_(bindparam("ids", expanding=True)),
                   ti.state.in_((TI.QUEUED.value, TI.RUNNING.value)))
            .group_by(ti.dag_run_id))


def active_by_task(
    conn: Connection, keys: Collection[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    """Queued or running task instances per (dag_id, task_id), over all runs."""
    return _active_by(conn, keys, ti.dag_id)


def active_by_run_task(
    conn: Connection, keys: Collection[tuple[int, str]]
) -> dict[tuple[int, str], int]:
    """Queued or running task instances per (dag_run_id, task_id): the instances of one mapped
    task in one run (``max_active_tis_per_dagrun``)."""
    return _active_by(conn, keys, ti.dag_run_id)


def _active_by(conn: Connection, keys: Collection[tuple[Any, str]], scope: Any
               ) -> dict[tuple[Any, str], int]:
    """Queued or running task instances per (``scope`` column, task_id)."""
    out: dict[tuple[Any, str], int] = {}
    for chunk in chunks(list(set(keys)), 300):
        for key, task_id, n in conn.execute(
            select(scope, ti.task_id, func.count())
            .where(tuple_(scope, ti.task_id).in_(chunk),
                   ti.state.in_((TI.QUEUED.value, TI.RUNNING.value)))
            .group_by(scope, ti.task_id)
        ).all():
            out[(key, task_id)] = int(n)
    return out


# -- depends_on_past ------------------------------------------------------------------------


def previous_run(conn: Connection, dag_id: str, logical_date: datetime,
                 *, exclude_manual: bool) -> Any:
    """The run of ``dag_id`` with the latest logical date before ``logical_date``."""
    stmt = (
        select(dr.id, dr.logical_date)
        .where(dr.dag_id == dag_id, dr.logical_date < logical_date)
        .order_by(dr.logical_date.desc(), dr.id.desc())
        .limit(1)
    )
    if exclude_manual:
        stmt = stmt.where(dr.run_type != "manual")
    return conn.execute(stmt).first()


def states_in_run(conn: Connection, run_pk: int, task_ids: Collection[str]) -> dict[str, str]:
    rows = conn.execute(
        select(ti.task_id, ti.state).where(ti.dag_run_id == run_pk,
                                           ti.task_id.in_(list(task_ids)))
    ).all()
    return {r.task_id: r.state for r in rows}


def tasks_run_before(conn: Connection, dag_id: str, task_ids: Collection[str],
                     logical_date: datetime) -> set[str]:
    """Of ``task_ids``: those with a task instance in a run before ``logical_date``."""
    rows = conn.execute(
        select(ti.task_id).distinct()
        .join(dag_run, dr.id == ti.dag_run_id)
        .where(ti.dag_id == dag_id, ti.task_id.in_(list(task_ids)),
               dr.logical_date < logical_date)
    ).all()
    return {r.task_id for r in rows}


def run_logical_date(conn: Connection, run_pk: int) -> datetime | None:
    row = conn.execute(select(dr.logical_date).where(dr.id == run_pk)).first()
    return None if row is None else row.logical_date


# -- Late -----------------------------------------------------------------------------------


def runs_to_name_late(conn: Connection, queued_before: datetime, limit: int = 1000) -> list[int]:
    return list(conn.execute(_late_runs(queued_before).limit(limit)).scalars())


def task_instances_to_name_late(conn: Connection, waiting_since: datetime,
                                limit: int = 1000) -> dict[str, list[int]]:
    """state → ids of task instances scheduled or queued since before ``waiting_since``."""
    out: dict[str, list[int]] = {}
    for state in _LATE_TI_STATES:
        ids = list(conn.execute(_late_tis(state, waiting_since).limit(limit)).scalars())
        if ids:
            out[state.value] = ids
    return out


def any_late_clause(queued_before: datetime, waiting_since: datetime) -> Any:
    """Is a run or a task instance to be named Late? (one ``EXISTS`` per query, no rows read)"""
    return or_(_late_runs(queued_before).exists(),
               *(_late_tis(state, waiting_since).exists() for state in _LATE_TI_STATES))


_LATE_TI_STATES = (TI.SCHEDULED, TI.QUEUED)


def _late_runs(queued_before: datetime) -> Any:
    return select(dr.id).where(dr.state == RUN.QUEUED.value, dr.queued_at < queued_before,
                               dr.state_name != StateName.LATE.value)


def _late_tis(state: TI, waiting_since: datetime) -> Any:
    column = ti.scheduled_at if state is TI.SCHEDULED else ti.queued_at
    return select(ti.id).where(ti.state == state.value, column < waiting_since,
                               ti.state_name != StateName.LATE.value)


def late_runs(conn: Connection) -> list[Any]:
    return list(conn.execute(
        select(dr.id, dr.dag_id, dr.run_id, dr.state, dr.state_name, dr.queued_at)
        .where(dr.state_name == StateName.LATE.value).order_by(dr.queued_at, dr.id)
    ).all())


def late_task_instances(conn: Connection) -> list[Any]:
    return list(conn.execute(
        select(ti.id, ti.dag_id, ti.run_id, ti.task_id, ti.state, ti.state_name,
               ti.scheduled_at, ti.queued_at, ti.pool)
        .where(ti.state_name == StateName.LATE.value).order_by(ti.id)
    ).all())


# -- task set changes -----------------------------------------------------------------------


def unfinished_runs(conn: Connection, dag_id: str) -> list[Any]:
    """Queued, running and paused runs of ``dag_id``."""
    return list(conn.execute(
        select(dr.id, dr.run_id, dr.state).where(
            dr.dag_id == dag_id,
            dr.state.in_((RUN.QUEUED.value, RUN.RUNNING.value, RUN.PAUSED.value)))
        .order_by(dr.id)
    ).all())


def task_instances_of_runs(conn: Connection, run_pks: Collection[int]) -> list[Any]:
    out: list[Any] = []
    for chunk in chunks(list(run_pks), 400):
        out += conn.execute(
            select(ti.id, ti.dag_run_id, ti.task_id, ti.state).where(ti.dag_run_id.in_(chunk))
        ).all()
    return out
