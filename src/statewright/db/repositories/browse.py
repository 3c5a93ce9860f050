"""Read-only, paginated queries for browsing DAGs, runs and task instances.

The REST API and the web UI read through these. Each function is a fixed, small number of
statements whatever the number of rows: the grid of a DAG is one query for its runs and one
aggregated query for every task instance of those runs (never one query per run).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import BigInteger, Connection, Text, cast, extract, func, or_, select

from statewright.db.tables import dag, dag_run, job, task_instance

ti = task_instance.c
dr = dag_run.c

# Columns of the DAG list (``serialized`` is left out: it can be large).
_DAG_LIST_COLUMNS = (
    dag.c.dag_id, dag.c.fileloc, dag.c.is_paused, dag.c.is_active, dag.c.description,
    dag.c.schedule_summary, dag.c.max_active_runs, dag.c.max_active_tasks, dag.c.fail_stop,
    dag.c.next_dagrun, dag.c.next_dagrun_create_after, dag.c.last_parsed_at, dag.c.tags,
    dag.c.serialized["dag_display_name"].as_string().label("dag_display_name"),
    dag.c.kind,
    dag.c.serialized["owners"].label("owners"),
)

RUN_ORDERS = {
    "run_after": (dr.run_after.asc(), dr.id.asc()),
    "-run_after": (dr.run_after.desc(), dr.id.desc()),
    "logical_date": (dr.logical_date.asc(), dr.id.asc()),
    "-logical_date": (dr.logical_date.desc(), dr.id.desc()),
    "start_date": (dr.start_date.asc(), dr.id.asc()),
    "-start_date": (dr.start_date.desc(), dr.id.desc()),
    "id": (dr.id.asc(),),
    "-id": (dr.id.desc(),),
}
"""Accepted orders of run lists (``-`` means descending); the newest first is ``-run_after``."""


def dags_page(
    conn: Connection,
    *,
    limit: int,
    offset: int,
    paused: bool | None = None,
    tags: Sequence[str] = (),
    dag_id_pattern: str | None = None,
    only_active: bool = True,
    owners: Sequence[str] = (),
    last_run_state: str | None = None,
    extra: Sequence[Any] = (),
) -> tuple[list[Any], int]:
    """One page of DAGs ordered by id, and the number of DAGs matching the filters: any of
    ``owners``, the newest run in ``last_run_state``, and ``extra`` WHERE conditions."""
    conditions: list[Any] = list(extra)
    if owners:
        # ``owners`` is a JSON list in the serialized DAG, matched like the tags.
        owned = cast(dag.c.serialized["owners"], Text)
        conditions.append(or_(*[owned.contains(json.dumps(o), autoescape=True) for o in owners]))
    if last_run_state:
        newest = (select(dr.state).where(dr.dag_id == dag.c.dag_id)
                  .order_by(dr.run_after.desc(), dr.id.desc()).limit(1).scalar_subquery())
        conditions.append(newest == last_run_state)
    if only_active:
        conditions.append(dag.c.is_active.is_(True))
    if paused is not None:
        conditions.append(dag.c.is_paused.is_(paused))
    if dag_id_pattern:
        conditions.append(dag.c.dag_id.contains(dag_id_pattern, autoescape=True))
    if tags:
        # ``tags`` is a JSON list; a tag matches as its JSON string, quotes included.
        as_text = cast(dag.c.tags, Text)
        conditions.append(or_(*[as_text.contains(json.dumps(t), autoescape=True)
                                for t in tags]))
    total = conn.execute(select(func.count()).select_from(dag).where(*conditions)).scalar_one()
    rows = conn.execute(
        select(*_DAG_LIST_COLUMNS).where(*conditions).order_by(dag.c.dag_id)
        .limit(limit).offset(offset)
    ).all()
    return list(rows), int(total)


def recent_runs(conn: Connection, dag_ids: Sequence[str], per_dag: int) -> dict[str, list[Any]]:
    """The ``per_dag`` newest runs of each DAG (newest first), in one query."""
    ids = list(set(dag_ids))
    if not ids or per_dag <= 0:
        return {}
    rank = func.row_number().over(
        partition_by=dr.dag_id, order_by=(dr.run_after.desc(), dr.id.desc())
    ).label("rank")
    ranked = (
        select(dr.dag_id, dr.run_id, dr.state, dr.state_name, dr.run_after, dr.logical_date,
               dr.start_date, dr.end_date, rank)
        .where(dr.dag_id.in_(ids))
        .subquery()
    )
    rows = conn.execute(
        select(ranked).where(ranked.c.rank <= per_dag).order_by(ranked.c.dag_id, ranked.c.rank)
    ).all()
    out: dict[str, list[Any]] = {}
    for r in rows:
        out.setdefault(r.dag_id, []).append(r)
    return out


def runs_page(
    conn: Connection,
    dag_id: str,
    *,
    limit: int,
    offset: int,
    states: Sequence[str] = (),
    order_by: str = "-run_after",
) -> tuple[list[Any], int]:
    """One page of the runs of ``dag_id`` (newest first by default) and how many match."""
    conditions: list[Any] = [dr.dag_id == dag_id]
    if states:
        conditions.append(dr.state.in_(list(states)))
    total = conn.execute(
        select(func.count()).select_from(dag_run).where(*conditions)
    ).scalar_one()
    rows = conn.execute(
        select(dag_run).where(*conditions).order_by(*RUN_ORDERS[order_by])
        .limit(limit).offset(offset)
    ).all()
    return list(rows), int(total)


def grid_cells(conn: Connection, dag_run_ids: Sequence[int], message_chars: int = 200
               ) -> Iterator[Any]:
    """Every task instance of the given runs, in ONE query: the cells of a DAG's grid.

    Uses the ``(dag_run_id, task_id, map_index)`` index; the message is cut to
    ``message_chars`` characters (the full one is on the task instance). The rows come as the
    caller reads them (read them all while ``conn`` is open): the 25,000 rows of a big grid are
    never all alive at once, which spares a full pass of Python's garbage collector.
    """
    return _grid_rows(conn, dag_run_ids, ti.start_date, ti.end_date, message_chars)


def grid_cells_compact(conn: Connection, dag_run_ids: Sequence[int], message_chars: int = 200,
                       task_ids: Sequence[str] | None = None) -> Iterator[Any]:
    """``grid_cells`` with ``start_date`` and ``end_date`` as epoch milliseconds (UTC, rounded
    to the millisecond), computed by the database: no datetime is built for the 50,000 dates of
    a big grid. ``task_ids``: only these tasks' cells."""
    start, end = (_epoch_ms(conn, column).label(column.name)
                  for column in (ti.start_date, ti.end_date))
    return _grid_rows(conn, dag_run_ids, start, end, message_chars, task_ids)


def _grid_rows(conn: Connection, dag_run_ids: Sequence[int], start: Any, end: Any,
               message_chars: int, task_ids: Sequence[str] | None = None) -> Iterator[Any]:
    if not dag_run_ids:
        return
    query = (select(ti.dag_run_id, ti.task_id, ti.map_index, ti.state, ti.state_name,
                    func.substr(ti.state_message, 1, message_chars).label("state_message"),
                    ti.try_number, ti.max_tries, start, end, ti.duration, ti.dag_version_id)
             .where(ti.dag_run_id.in_(list(dag_run_ids))))
    if task_ids is not None:
        query = query.where(ti.task_id.in_(list(task_ids)))
    result = conn.execute(query)
    for part in result.partitions(100):
        yield from part


def _epoch_ms(conn: Connection, column: Any) -> Any:
    """Milliseconds since 1970-01-01 UTC of a UTC date column, rounded half up (SQLite keeps the
    dates as naive text; ``julianday`` counts whole milliseconds)."""
    if conn.dialect.name == "sqlite":
        seconds = (func.julianday(column) - 2440587.5) * 86400
    else:
        seconds = extract("epoch", column)
    return cast(func.round(seconds * 1000), BigInteger)


def task_instance_counts(conn: Connection, dag_run_id: int) -> dict[str, int]:
    """state → number of task instances of one run."""
    rows = conn.execute(
        select(ti.state, func.count()).where(ti.dag_run_id == dag_run_id).group_by(ti.state)
    ).all()
    return {r[0]: int(r[1]) for r in rows}


def latest_heartbeats(conn: Connection) -> dict[str, Any]:
    """job_type → (latest heartbeat of a running job, number of running jobs, any job at all)."""
    rows = conn.execute(
        select(
            job.c.job_type,
            func.max(job.c.latest_heartbeat).label("latest_heartbeat"),
            func.count().label("jobs"),
        ).group_by(job.c.job_type)
    ).all()
    running = {
        r.job_type: r for r in conn.execute(
            select(job.c.job_type, func.max(job.c.latest_heartbeat).label("latest_heartbeat"),
                   func.count().label("running"))
            .where(job.c.status == "running").group_by(job.c.job_type)
        ).all()
    }
    out: dict[str, Any] = {}
    for r in rows:
        alive = running.get(r.job_type)
        out[r.job_type] = {
            "latest_heartbeat": r.latest_heartbeat,
            "running_jobs": int(alive.running) if alive else 0,
            "running_latest_heartbeat": alive.latest_heartbeat if alive else None,
        }
    return out
