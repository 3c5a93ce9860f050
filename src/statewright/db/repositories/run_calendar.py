"""The dates and states of a DAG's runs in a time range: what the DAG page's calendar counts.

A run is placed by its logical date, or by when it was due (``run_after``) when it has none
(a manual run of Airflow 3 may have no logical date).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select

from statewright.db.tables import dag_run

dr = dag_run.c


def run_dates(conn: Connection, dag_id: str, *, gte: datetime | None, lte: datetime | None,
              gt: datetime | None = None, lt: datetime | None = None,
              ) -> Iterator[tuple[datetime, str]]:
    """``(date, state)`` of every run of ``dag_id`` whose date lies in the given bounds (one
    query, two columns: a year of hourly runs is 8,760 small rows)."""
    when = func.coalesce(dr.logical_date, dr.run_after)
    conditions: list[Any] = [dr.dag_id == dag_id, when.is_not(None)]
    if gte is not None:
        conditions.append(when >= gte)
    if gt is not None:
        conditions.append(when > gt)
    if lte is not None:
        conditions.append(when <= lte)
    if lt is not None:
        conditions.append(when < lt)
    rows = conn.execute(select(dr.logical_date, dr.run_after, dr.state).where(*conditions))
    for logical, run_after, state in rows:
        moment = logical if logical is not None else run_after
        yield moment, str(state)
