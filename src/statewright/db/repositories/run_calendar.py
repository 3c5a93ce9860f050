"""How many runs of a DAG each day (or hour, UTC) has, per state: what the DAG page's calendar
draws. Counted by the database in one grouped query (a year of hourly runs is 8,760 runs and
at most 365 rows per state back).

A run is placed by its logical date, or by when it was due (``run_after``) when it has none
(a manual run of Airflow 3 may have no logical date).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, func, select

from statewright.db.tables import dag_run

dr = dag_run.c


def run_counts(conn: Connection, dag_id: str, *, hourly: bool, gte: datetime | None,
               lte: datetime | None, gt: datetime | None = None, lt: datetime | None = None,
               ) -> list[tuple[datetime, str, int]]:
    """``(day or hour at its start, state, number of runs)`` of the runs of ``dag_id`` whose
    date lies in the given bounds."""
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
    if conn.dialect.name == "sqlite":  # dates are naive UTC text: 'YYYY-MM-DD HH:MM:SS…'
        bucket: Any = func.substr(when, 1, 13 if hourly else 10)
    else:
        bucket = func.date_trunc("hour" if hourly else "day", func.timezone("UTC", when))
    rows = conn.execute(select(bucket.label("bucket"), dr.state, func.count())
                        .where(*conditions).group_by(bucket, dr.state))
    return [(_moment(b), str(state), int(n)) for b, state, n in rows]


def _moment(bucket: Any) -> datetime:
    if isinstance(bucket, datetime):
        return bucket.replace(tzinfo=UTC)
    text = str(bucket)
    day = datetime.fromisoformat(text[:10]).replace(tzinfo=UTC)
    return day.replace(hour=int(text[11:13])) if len(text) >= 13 else day
