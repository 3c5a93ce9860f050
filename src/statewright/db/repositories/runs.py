"""Queries on ``dag_run``."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, bindparam, func, select

from statewright.core.states import RUN
from statewright.db.repositories.dags import hash_column
from statewright.db.tables import dag, dag_run


def get_by_run_id(conn: Connection, dag_id: str, run_id: str) -> Any:
    return conn.execute(
        select(dag_run).where(dag_run.c.dag_id == dag_id, dag_run.c.run_id == run_id)
    ).first()


def get_by_logical_date(conn: Connection, dag_id: str, logical_date: Any) -> Any:
    """The run of ``dag_id`` at ``logical_date`` (a DAG has one run per logical date)."""
    return conn.execute(select(dag_run).where(
        dag_run.c.dag_id == dag_id, dag_run.c.logical_date == logical_date).limit(1)).first()


def get(conn: Connection, pk: int) -> Any:
    return conn.execute(select(dag_run).where(dag_run.c.id == pk)).first()


def find_by_run_id(conn: Connection, run_id: str) -> list[Any]:
    return list(conn.execute(select(dag_run).where(dag_run.c.run_id == run_id)).all())


def queued_runs_to_start(conn: Connection, limit: int = 100) -> list[Any]:
    """Queued runs of active, unpaused DAGs, oldest first."""
    return list(conn.execute(_queued_runs_to_start(), {"limit": limit}).all())


def queued_runs_query() -> Any:
    """The runs of ``queued_runs_to_start`` (a query for an ``EXISTS``)."""
    return select(dag_run.c.id).join(dag, dag.c.dag_id == dag_run.c.dag_id).where(*_to_start())


def _to_start() -> tuple[Any, ...]:
    return (dag_run.c.state == RUN.QUEUED.value, dag.c.is_paused.is_(False),
            dag.c.kind != "flow")  # a flow's process runs its own runs


# The scheduler reads these on every loop: built once, run with parameters.
@functools.cache
def _queued_runs_to_start() -> Any:
    return (
        select(dag_run.c.id, dag_run.c.dag_id, dag.c.max_active_runs)
        .join(dag, dag.c.dag_id == dag_run.c.dag_id).where(*_to_start())
        .order_by(dag_run.c.queued_at, dag_run.c.id)
        .limit(bindparam("limit"))
    )


_RUNNING_RUNS = (
    select(dag_run.c.id, dag_run.c.dag_id, dag_run.c.run_id, dag_run.c.logical_date,
           dag_run.c.state)
    # Flows' DAG ids from the index on dag.kind (migration 0017), not a join: on SQLite the
    # kind column sits after the serialized DAG in each row, megabytes for a big DAG.
    .where(dag_run.c.state == RUN.RUNNING.value,
           dag_run.c.dag_id.not_in(select(dag.c.dag_id).where(dag.c.kind == "flow")))
    .order_by(dag_run.c.id)
)


def count_running_by_dag(conn: Connection, dag_ids: Iterable[str]) -> dict[str, int]:
    ids = list(set(dag_ids))
    if not ids:
        return {}
    rows = conn.execute(
        select(dag_run.c.dag_id, func.count())
        .where(dag_run.c.dag_id.in_(ids), dag_run.c.state == RUN.RUNNING.value)
        .group_by(dag_run.c.dag_id)
    ).all()
    return {r[0]: int(r[1]) for r in rows}


def count_by_dag_and_state(conn: Connection, dag_ids: Iterable[str] | None = None
                           ) -> dict[str, dict[str, int]]:
    """How many runs each DAG has in each state (every DAG with runs when ``dag_ids`` is
    None)."""
    stmt = select(dag_run.c.dag_id, dag_run.c.state, func.count()).group_by(
        dag_run.c.dag_id, dag_run.c.state)
    if dag_ids is not None:
        stmt = stmt.where(dag_run.c.dag_id.in_(list(set(dag_ids))))
    out: dict[str, dict[str, int]] = {}
    for dag_id, state, n in conn.execute(stmt).all():
        out.setdefault(dag_id, {})[state] = int(n)
    return out


def running_runs(conn: Connection) -> list[Any]:
    return list(conn.execute(_RUNNING_RUNS).all())


def running_runs_with_hashes(conn: Connection) -> list[Any]:
    """``running_runs``, each with its DAG's current hash (``dag_hash``; None: the DAG is
    gone): the scheduler's probe reads both on every pass, in one statement."""
    return list(conn.execute(_running_runs_with_hashes(conn.dialect.name)).all())


@functools.cache
def _running_runs_with_hashes(dialect: str) -> Any:
    return _RUNNING_RUNS.add_columns(hash_column(dialect, dag_run.c.dag_id).label("dag_hash"))


def list_runs(conn: Connection, dag_id: str | None = None, limit: int = 50) -> list[Any]:
    stmt = select(dag_run).order_by(dag_run.c.id.desc()).limit(limit)
    if dag_id:
        stmt = stmt.where(dag_run.c.dag_id == dag_id)
    return list(conn.execute(stmt).all())


def run_ids_around(conn: Connection, dag_id: str, run_id: str, *, past: bool,
                   future: bool) -> list[str]:
    """The run ids of ``dag_id`` whose logical date (its run_after when it has none) is before
    (``past``) or after (``future``) that of ``run_id``, oldest first; ``run_id`` itself is in
    the middle. Airflow's ``include_past`` / ``include_future``."""
    when = func.coalesce(dag_run.c.logical_date, dag_run.c.run_after)
    pivot = conn.execute(select(when).where(dag_run.c.dag_id == dag_id,
                                            dag_run.c.run_id == run_id)).scalar()
    if pivot is None or not (past or future):
        return [run_id]
    bounds = []
    if not past:
        bounds.append(when >= pivot)
    if not future:
        bounds.append(when <= pivot)
    rows = conn.execute(select(dag_run.c.run_id).where(dag_run.c.dag_id == dag_id, *bounds)
                        .order_by(when, dag_run.c.id)).scalars().all()
    return list(rows) if run_id in rows else [*rows, run_id]
