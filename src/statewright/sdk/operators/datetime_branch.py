"""Branching on time: ``LatestOnlyOperator``, ``BranchDayOfWeekOperator`` and
``BranchDateTimeOperator`` (Airflow's standard operators, same arguments and rules)."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.core.timetables import parse_schedule
from statewright.sdk.branch import BaseBranchOperator

__all__ = ["BranchDateTimeOperator", "BranchDayOfWeekOperator", "LatestOnlyOperator", "WeekDay"]


def _now() -> datetime:
    return datetime.now(UTC)


def _run_type(context: Any) -> str | None:
    return getattr(context.get("dag_run"), "run_type", None) or context.get("run_type")


class LatestOnlyOperator(BaseBranchOperator):
    """Skip the tasks downstream unless this run is the latest scheduled one (its schedule
    window contains now). Manual and asset-triggered runs always continue, as in Airflow 3."""

    clock = staticmethod(_now)

    def choose_branch(self, context: Any) -> Iterable[str]:
        everything = sorted(self.downstream_task_ids)
        if _run_type(context) in ("manual", "asset_triggered"):
            return everything
        dag = context["dag"]
        end = context.get("data_interval_end") or context.get("logical_date")
        schedule = dag.schedule
        if end is None or schedule is None or isinstance(schedule, (list, tuple)) or hasattr(
                schedule, "as_condition"):
            return everything
        timetable = getattr(schedule, "timetable", None) or parse_schedule(
            schedule, timezone=getattr(dag, "timezone", "UTC"))
        nxt = timetable.next_run(
            last_automated=_info(context), start_date=None, end_date=None, catchup=True, now=end)
        if nxt is None:
            return everything
        now = self.clock()
        if not end < now <= nxt.data_interval_end:
            self.log_skip(now, end, nxt.data_interval_end)
            return []
        return everything

    def log_skip(self, now: datetime, left: datetime, right: datetime) -> None:
        import logging

        logging.getLogger("statewright.task").info(
            "Not the latest run (now %s is outside (%s, %s]); skipping downstream tasks",
            now.isoformat(), left.isoformat(), right.isoformat())


def _info(context: Any) -> Any:
    from statewright.core.timetables import DagRunInfo

    logical = context.get("logical_date")
    start = context.get("data_interval_start") or logical
    end = context.get("data_interval_end") or logical
    return DagRunInfo(logical_date=logical, data_interval_start=start, data_interval_end=end,
                      run_after=end)


class WeekDay(enum.IntEnum):
    """Python's ``isoweekday`` numbers (Airflow's ``WeekDay``)."""

    MONDAY = 1
    TUESDAY = 2
    WEDNESDAY = 3
    THURSDAY = 4
    FRIDAY = 5
    SATURDAY = 6
    SUNDAY = 7

    @classmethod
    def convert(cls, day: str | WeekDay) -> int:
        if isinstance(day, WeekDay):
            return int(day)
        if not isinstance(day, str) or day.upper() not in cls.__members__:
            raise DagDefinitionError(
                f"week_day {day!r} is not a day of the week; use a name such as 'Monday' or a "
                "WeekDay")
        return int(cls[day.upper()])

    @classmethod
    def validate_week_day(cls, week_day: Any) -> set[int]:
        if isinstance(week_day, (str, WeekDay)):
            return {cls.convert(week_day)}
        if isinstance(week_day, Iterable):
            days = {cls.convert(d) for d in week_day}
            if days:
                return days
        raise DagDefinitionError(
            f"week_day must be a day name, a WeekDay or a set of them; got {week_day!r}")


def _ids(value: str | Iterable[str], what: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = list(value)
    if not all(isinstance(i, str) for i in items):
        raise DagDefinitionError(f"{what} must be a task id or a list of task ids")
    return items


class _TimeBranch(BaseBranchOperator):
    """Two branches chosen by the time now (or the run's logical date)."""

    clock = staticmethod(_now)

    def __init__(self, *, follow_task_ids_if_true: str | Iterable[str],
                 follow_task_ids_if_false: str | Iterable[str],
                 use_task_logical_date: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.follow_task_ids_if_true = _ids(follow_task_ids_if_true, "follow_task_ids_if_true")
        self.follow_task_ids_if_false = _ids(follow_task_ids_if_false,
                                             "follow_task_ids_if_false")
        self.use_task_logical_date = bool(use_task_logical_date)

    def moment(self, context: Any) -> datetime:
        now: datetime | None = (context.get("logical_date") if self.use_task_logical_date
                                else self.clock())
        if now is None:
            raise ValueError(f"task {self.task_id!r}: use_task_logical_date=True, but this run "
                             "has no logical date")
        return now


class BranchDayOfWeekOperator(_TimeBranch):
    """Follow ``follow_task_ids_if_true`` on the given week day(s), else the other branch. The
    day is today's (UTC) or, with ``use_task_logical_date``, the run's logical date's."""

    def __init__(self, *, week_day: str | WeekDay | Iterable[str | WeekDay],
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.week_day = week_day
        self._days = WeekDay.validate_week_day(week_day)

    def choose_branch(self, context: Any) -> Iterable[str]:
        if self.moment(context).isoweekday() in self._days:
            return self.follow_task_ids_if_true
        return self.follow_task_ids_if_false


def _as_datetime(value: datetime | time | None, base: date, tz: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=tz)
    return datetime.combine(base, value, tzinfo=value.tzinfo or tz)


class BranchDateTimeOperator(_TimeBranch):
    """Follow ``follow_task_ids_if_true`` when now (or the logical date) lies between
    ``target_lower`` and ``target_upper`` (datetimes, or times of the same day; an upper time
    before the lower one means the next day), else the other branch."""

    def __init__(self, *, target_lower: datetime | time | None,
                 target_upper: datetime | time | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if target_lower is None and target_upper is None:
            raise DagDefinitionError(
                f"task {self.task_id!r}: both target_upper and target_lower are None; at least "
                "one must be given to compare with the current datetime")
        for name, value in (("target_lower", target_lower), ("target_upper", target_upper)):
            if value is not None and not isinstance(value, (datetime, time)):
                raise DagDefinitionError(f"task {self.task_id!r}: {name} must be a datetime or "
                                         f"a time, got {type(value).__name__}")
        self.target_lower, self.target_upper = target_lower, target_upper

    def choose_branch(self, context: Any) -> Iterable[str]:
        now = self.moment(context)
        tz = getattr(context.get("dag"), "timezone", None) or UTC
        base = now.astimezone(tz).date()
        lower = _as_datetime(self.target_lower, base, tz)
        upper = _as_datetime(self.target_upper, base, tz)
        if lower is not None and upper is not None and upper < lower:
            upper += timedelta(days=1)
        if (upper is not None and upper < now) or (lower is not None and lower > now):
            return self.follow_task_ids_if_false
        return self.follow_task_ids_if_true
