"""Airflow 2's context and template keys, in every task's context under the layer.

``execution_date`` is the run's logical date; ``next_execution_date`` / ``prev_execution_date``
the logical dates of the scheduled runs after and before it by the DAG's schedule (for a
manual run: its own logical date, as in Airflow 2); ``next_ds``, ``prev_ds``, ``tomorrow_ds``,
``yesterday_ds`` (and ``_nodash``) those dates as text; ``prev_execution_date_success`` the
previous successful run's ``prev_data_interval_start_success``; ``triggering_dataset_events``
the ``triggering_asset_events``. Keys a context has already are kept (``build_context``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from statewright.compat.airflow.airflow2 import CONTEXT_KEYS

__all__ = ["airflow2_context"]

SCHEDULED_PREFIXES = ("scheduled__", "backfill__", "asset_triggered__", "dataset_triggered__")
"""Run ids of runs the scheduler made (Airflow 2's ``external_trigger`` was False for them)."""


def airflow2_context(context: Mapping[str, Any]) -> dict[str, Any]:
    """The Airflow 2 keys (``airflow2.CONTEXT_KEYS``) of a task's context."""
    logical: datetime | None = context.get("logical_date")
    out: dict[str, Any] = {
        "prev_execution_date_success": context.get("prev_data_interval_start_success"),
        "triggering_dataset_events": context.get("triggering_asset_events"),
    }
    if logical is None:
        out.update(dict.fromkeys(set(CONTEXT_KEYS) - set(out)))
        return out
    manual = not str(context.get("run_id") or "").startswith(SCHEDULED_PREFIXES)
    following = logical if manual else _next_logical(context, logical)
    before = logical if manual else _prev_logical(context, logical)
    out.update(execution_date=logical, next_execution_date=following,
               prev_execution_date=before)
    for name, moment in (("next", following), ("prev", before),
                         ("tomorrow", logical + timedelta(days=1)),
                         ("yesterday", logical - timedelta(days=1))):
        text = None if moment is None else moment.strftime("%Y-%m-%d")
        out[f"{name}_ds"] = text
        out[f"{name}_ds_nodash"] = None if text is None else text.replace("-", "")
    return out


def _timetable(context: Mapping[str, Any]) -> Any:
    from statewright.core.timetables import Timetable, parse_schedule
    from statewright.sdk.assets import is_asset_schedule

    dag = context.get("dag")
    schedule = getattr(dag, "schedule", None)
    if schedule is None or is_asset_schedule(schedule):
        return None
    if isinstance(schedule, Timetable):
        return schedule
    try:
        return parse_schedule(schedule, timezone=getattr(dag, "timezone", None) or "UTC")
    except Exception:  # an unusual schedule: the keys are None rather than a failed try
        return None


def _next_logical(context: Mapping[str, Any], logical: datetime) -> datetime | None:
    from statewright.core.timetables import DagRunInfo

    timetable = _timetable(context)
    if timetable is None:
        return None
    start = context.get("data_interval_start") or logical
    end = context.get("data_interval_end") or logical
    this = DagRunInfo(logical_date=logical, data_interval_start=start, data_interval_end=end,
                      run_after=end)
    try:
        info = timetable.next_run(last_automated=this, start_date=None, end_date=None,
                                  catchup=True, now=end + timedelta(days=3660))
    except Exception:
        return None
    return None if info is None else info.logical_date


def _prev_logical(context: Mapping[str, Any], logical: datetime) -> datetime | None:
    """Airflow 2's ``dag.previous_schedule``: the schedule time before ``logical`` (periodic
    schedules only)."""
    timetable = _timetable(context)
    step_back = getattr(timetable, "_get_prev", None)  # statewright's periodic timetables
    if step_back is None:
        return None
    try:
        moment: datetime = step_back(logical)
    except Exception:  # a timetable that cannot step back: the key is None, the try runs
        return None
    return moment
