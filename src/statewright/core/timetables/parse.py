"""Entry points: a DAG's ``schedule=`` argument to a timetable, its checks, and run ids."""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo

from statewright.core.errors import DagDefinitionError
from statewright.core.timetables._time import as_utc, opt_utc
from statewright.core.timetables.base import Timetable
from statewright.core.timetables.periodic import (
    CronDataIntervalTimetable,
    CronTriggerTimetable,
    DeltaDataIntervalTimetable,
    DeltaTriggerTimetable,
)
from statewright.core.timetables.simple import NullTimetable, OnceTimetable

__all__ = ["RUN_TYPES", "parse_schedule", "run_id_for", "validate_schedule_args"]

#: The run types of ``run_id_for`` (Airflow's ``DagRunType`` values).
RUN_TYPES = frozenset({"scheduled", "manual", "backfill", "asset_triggered"})


def parse_schedule(
    schedule: str | timedelta | Timetable | None,
    *,
    timezone: str | tzinfo = "UTC",
    data_intervals: bool = False,
) -> Timetable:
    """The timetable of a DAG's ``schedule=`` argument.

    ``data_intervals`` plays the part of Airflow's ``[scheduler] create_cron_data_intervals``
    (False by default in Airflow 3): when True, cron strings and timedeltas give data
    interval timetables instead of trigger timetables.
    """
    if isinstance(schedule, Timetable):
        return schedule
    if schedule is None:
        return NullTimetable()
    if isinstance(schedule, str):
        text = schedule.strip().lower()
        if text == "@once":
            return OnceTimetable()
        if text == "@continuous":
            raise DagDefinitionError(
                "schedule '@continuous' is not supported; use a cron expression or a timedelta."
            )
        if data_intervals:
            return CronDataIntervalTimetable(schedule, timezone=timezone)
        return CronTriggerTimetable(schedule, timezone=timezone)
    if isinstance(schedule, timedelta):
        if data_intervals:
            return DeltaDataIntervalTimetable(schedule)
        return DeltaTriggerTimetable(schedule)
    raise DagDefinitionError(
        f"schedule {schedule!r} of type {type(schedule).__name__} is not supported: use None, "
        "a cron expression such as '0 6 * * *', a preset such as '@daily', '@once', "
        "a positive timedelta or a Timetable."
    )


def validate_schedule_args(
    timetable: Timetable, start_date: datetime | None, end_date: datetime | None
) -> None:
    """Check a DAG's schedule arguments; raise DagDefinitionError naming the bad value.

    Airflow 3 lets a periodic DAG omit ``start_date`` (its first run is then computed from
    the current time); statewright requires one so that every scheduled run is reproducible.
    """
    start = opt_utc(start_date, "start_date")
    end = opt_utc(end_date, "end_date")
    if timetable.needs_start_date and start is None:
        raise DagDefinitionError(
            f"DAG needs a start_date for schedule {timetable.summary!r}: pass an aware "
            "datetime such as start_date=datetime(2026, 1, 1, tzinfo=UTC)."
        )
    if start is not None and end is not None and end < start:
        raise DagDefinitionError(
            f"end_date {end.isoformat()} is before start_date {start.isoformat()}; "
            "move end_date later or remove it."
        )


def run_id_for(run_type: str, logical_date_or_time: datetime) -> str:
    """Airflow's run id ``"<run_type>__<UTC isoformat>"``.

    For example ``scheduled__2026-01-01T00:00:00+00:00``. Pass the logical date of scheduled
    and backfill runs (equal to ``run_after`` under trigger timetables), and the logical
    date or the trigger time of manual runs.
    """
    kind = str(getattr(run_type, "value", run_type))
    if kind not in RUN_TYPES:
        raise ValueError(f"unknown run type {run_type!r}; expected one of {sorted(RUN_TYPES)}.")
    moment = as_utc(logical_date_or_time, "run id date")
    return f"{kind}__{moment.isoformat()}"

