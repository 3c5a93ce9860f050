"""A task's own ``start_date`` and ``end_date`` (Airflow's task arguments).

A task joining a DAG starts on the later of its own start date and the DAG's and ends on the
earlier of the end dates, as in Airflow; a task without its own dates takes the DAG's. A run
whose logical date is outside a task's dates gets no task instance of it
(``statewright.core.task_dates``); only dates that differ from the DAG's are serialized, so a
DAG whose tasks have none keeps its hash.
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Any

from statewright.core.errors import DagDefinitionError

__all__ = ["check_task_date", "join_dag_dates", "serialize_task_dates"]


def check_task_date(value: Any, what: str) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    raise DagDefinitionError(f"{what} must be a datetime, got {value!r}.")


def _aware(value: datetime | None, zone: tzinfo) -> datetime | None:
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=zone)


def join_dag_dates(task: Any, dag: Any) -> None:
    """Clamp the task's dates to the DAG's (later start, earlier end)."""
    start = _aware(getattr(task, "start_date", None), dag.timezone)
    end = _aware(getattr(task, "end_date", None), dag.timezone)
    if dag.start_date is not None:
        start = dag.start_date if start is None else max(start, dag.start_date)
    if dag.end_date is not None:
        end = dag.end_date if end is None else min(end, dag.end_date)
    task.start_date, task.end_date = start, end


def serialize_task_dates(task: Any, dag: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if dag is None:
        return out
    for name in ("start_date", "end_date"):
        value = getattr(task, name, None)
        if value is not None and value != getattr(dag, name, None):
            out[name] = value.isoformat()
    return out
