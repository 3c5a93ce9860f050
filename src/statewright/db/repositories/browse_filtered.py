"""Filtered, ordered pages of runs and task instances across DAGs and runs: what Airflow's
``/api/v2`` lists take (``~`` for every DAG or run, state and id lists, date and duration
ranges, id patterns, several orders). Each page is two statements (its rows, their number)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, Connection, Select, func, select

from statewright.db.tables import dag_run, task_instance, xcom

dr = dag_run.c
ti = task_instance.c

RUN_COLUMNS: dict[str, Any] = {
    "id": dr.id, "dag_id": dr.dag_id, "run_id": dr.run_id, "dag_run_id": dr.run_id,
    "state": dr.state, "run_type": dr.run_type, "logical_date": dr.logical_date,
    "run_after": dr.run_after, "start_date": dr.start_date, "end_date": dr.end_date,
    "updated_at": dr.updated_at, "partition_date": dr.partition_date,
    "partition_key": dr.partition_key, "triggered_by": dr.triggered_by,
    "data_interval_start": dr.data_interval_start, "data_interval_end": dr.data_interval_end,
}
"""Run fields a filter or order may name."""

TI_COLUMNS: dict[str, Any] = {
    "id": ti.id, "dag_id": ti.dag_id, "run_id": ti.run_id, "dag_run_id": ti.run_id,
    "task_id": ti.task_id, "map_index": ti.map_index, "state": ti.state,
    "try_number": ti.try_number, "pool": ti.pool, "queue": ti.queue, "operator": ti.operator,
    "executor": ti.executor, "rendered_map_index": ti.rendered_map_index,
    "start_date": ti.start_date, "end_date": ti.end_date, "updated_at": ti.updated_at,
    "duration": ti.duration, "logical_date": dr.logical_date, "run_after": dr.run_after,
    "data_interval_start": dr.data_interval_start, "data_interval_end": dr.data_interval_end,
}
"""Task instance fields a filter or order may name (the run's dates through its run)."""

XCOM_COLUMNS: dict[str, Any] = {
    "id": xcom.c.id, "key": xcom.c.key, "dag_id": dr.dag_id, "run_id": dr.run_id,
    "task_id": xcom.c.task_id, "map_index": xcom.c.map_index, "timestamp": xcom.c.created_at,
    "logical_date": dr.logical_date, "run_after": dr.run_after,
}
"""XCom fields a filter or order may name."""

_OPS = {"gt": "__gt__", "gte": "__ge__", "lt": "__lt__", "lte": "__le__"}


@dataclass
class Filters:
    """What a page keeps: ``values`` (field → accepted values; ``None`` in them matches null),
    ``ranges`` (``(field, gt|gte|lt|lte, bound)``), ``patterns`` (``(field, contains|prefix,
    text)``, case-insensitive, ``%`` and ``_`` matched as themselves), ``order_by`` (fields,
    ``-`` for descending; the row id breaks ties)."""

    values: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    ranges: Sequence[tuple[str, str, Any]] = ()
    patterns: Sequence[tuple[str, str, str]] = ()
    order_by: Sequence[str] = ("id",)


def unknown_orders(order_by: Sequence[str], columns: Mapping[str, Any]) -> list[str]:
    return [o for o in order_by if o.lstrip("-") not in columns]


def _conditions(f: Filters, columns: Mapping[str, Any]) -> list[ColumnElement[bool]]:
    out: list[ColumnElement[bool]] = []
    for name, accepted in f.values.items():
        column, given = columns[name], list(accepted)
        present = [v for v in given if v is not None]
        choices = [column.in_(present)] if present else []
        if len(present) < len(given):
            choices.append(column.is_(None))
        out.append(choices[0] if len(choices) == 1 else choices[0] | choices[1])
    for name, op, bound in f.ranges:
        out.append(getattr(columns[name], _OPS[op])(bound))
    for name, kind, text in f.patterns:
        column = columns[name]
        out.append(column.icontains(text, autoescape=True) if kind == "contains"
                   else column.istartswith(text, autoescape=True))
    return out


def _page(conn: Connection, query: Select[Any], count: Select[Any], f: Filters,
          columns: Mapping[str, Any], id_column: Any, limit: int | None, offset: int
          ) -> tuple[list[Any], int]:
    where = _conditions(f, columns)
    total = conn.execute(count.where(*where)).scalar_one()
    order = [columns[o.lstrip("-")].desc() if o.startswith("-") else columns[o].asc()
             for o in f.order_by]
    query = query.where(*where).order_by(*order, id_column.asc()).offset(offset)
    if limit is not None:
        query = query.limit(limit)
    return list(conn.execute(query).all()), int(total)


def runs(conn: Connection, f: Filters, *, limit: int | None, offset: int
         ) -> tuple[list[Any], int]:
    """One page of runs (of every DAG unless ``values`` names ``dag_id``) and how many match."""
    return _page(conn, select(dag_run), select(func.count()).select_from(dag_run), f,
                 RUN_COLUMNS, dr.id, limit, offset)


def task_instances(conn: Connection, f: Filters, *, limit: int | None, offset: int
                   ) -> tuple[list[Any], int]:
    """One page of task instances, each with its run's dates (``run_logical_date``,
    ``run_after``, ``run_queued_at``), and how many match."""
    joined = task_instance.join(dag_run, dr.id == ti.dag_run_id)
    query = select(task_instance, dr.logical_date.label("run_logical_date"),
                   dr.run_after.label("run_after"), dr.queued_at.label("run_queued_at")
                   ).select_from(joined)
    return _page(conn, query, select(func.count()).select_from(joined), f, TI_COLUMNS, ti.id,
                 limit, offset)


def xcoms(conn: Connection, f: Filters, *, limit: int | None, offset: int
          ) -> tuple[list[Any], int]:
    """One page of XCom entries (without their values), each with its run's ``dag_id``,
    ``run_id``, ``logical_date`` and ``run_after``, and how many match."""
    joined = xcom.join(dag_run, dr.id == xcom.c.dag_run_id)
    query = select(xcom.c.id, xcom.c.key, xcom.c.task_id, xcom.c.map_index,
                   xcom.c.created_at.label("timestamp"), dr.dag_id, dr.run_id,
                   dr.logical_date, dr.run_after).select_from(joined)
    return _page(conn, query, select(func.count()).select_from(joined), f, XCOM_COLUMNS,
                 xcom.c.id, limit, offset)
