"""A task's own ``start_date`` / ``end_date``: which runs get a task instance of it.

As Airflow (2.x and 3.x, ``DagRun.verify_integrity``'s task filter): a run gets no task
instance of a task whose ``start_date`` is after the run's logical date, or whose ``end_date`` is
before it. Backfill runs, and runs without a logical date, get every task.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

__all__ = ["BACKFILL", "task_in_run"]

BACKFILL = "backfill"


def task_in_run(window: tuple[datetime | None, datetime | None] | None,
                logical_date: datetime | None, run_type: str) -> bool:
    """Whether a run at ``logical_date`` of type ``run_type`` has a task instance of a task whose
    own dates are ``window`` (start, end; None where unset)."""
    if window is None or logical_date is None or run_type == BACKFILL:
        return True
    start, end = window
    return (start is None or start <= logical_date) and (end is None or logical_date <= end)


def rows_in_run(rows: list[Mapping[str, object]],
                windows: Mapping[str, tuple[datetime | None, datetime | None]],
                logical_date: datetime | None, run_type: str,
                dag_window: tuple[datetime | None, datetime | None] | None = None,
                ) -> list[Mapping[str, object]]:
    """The new task instance ``rows`` (each with a ``task_id``) a run keeps: a task without
    dates of its own (not in ``windows``) has the DAG's (``dag_window``), as in Airflow."""
    if not windows and (dag_window is None or dag_window == (None, None)):
        return rows
    return [r for r in rows
            if task_in_run(windows.get(str(r["task_id"]), dag_window), logical_date, run_type)]
