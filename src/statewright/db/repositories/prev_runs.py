"""The previous successful run of a DAG, for the ``prev_*_success`` keys of a task's context."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, select

from statewright.db.tables import dag_run

PREV_SUCCESS_KEYS = {
    "prev_data_interval_start_success": "data_interval_start",
    "prev_data_interval_end_success": "data_interval_end",
    "prev_start_date_success": "start_date",
    "prev_end_date_success": "end_date",
}


@functools.cache
def _previous_success() -> Any:
    return (select(dag_run.c.data_interval_start, dag_run.c.data_interval_end,
                   dag_run.c.start_date, dag_run.c.end_date)
            .where(dag_run.c.dag_id == bindparam("dag_id"), dag_run.c.state == "success",
                   dag_run.c.logical_date < bindparam("logical_date"))
            .order_by(dag_run.c.logical_date.desc()).limit(1))


def previous_success_values(
    conn: Connection, runs: Iterable[tuple[str, datetime | None]],
) -> dict[tuple[str, datetime | None], dict[str, datetime | None]]:
    """(dag_id, logical_date) → the ``prev_*_success`` values: those of the latest successful
    run of the DAG with an earlier logical date (all None when there is none). One indexed
    query per distinct run."""
    out: dict[tuple[str, datetime | None], dict[str, datetime | None]] = {}
    for dag_id, logical_date in set(runs):
        row = None
        if logical_date is not None:
            row = conn.execute(_previous_success(), {"dag_id": dag_id,
                                                     "logical_date": logical_date}).first()
        out[(dag_id, logical_date)] = {
            key: (getattr(row, column) if row is not None else None)
            for key, column in PREV_SUCCESS_KEYS.items()}
    return out
