"""``DayOfWeekSensor``: wait until it is one of the given days of the week (Airflow's)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from statewright.sdk.operators.datetime_branch import WeekDay
from statewright.sdk.sensors import base
from statewright.sdk.sensors.base import BaseSensor

__all__ = ["DayOfWeekSensor"]


class DayOfWeekSensor(BaseSensor):
    """Succeeds once today (UTC) is in ``week_day`` (a day name, a :class:`WeekDay`, or a set
    of them); with ``use_task_logical_date`` it checks the run's logical date instead."""

    def __init__(self, *, week_day: str | WeekDay | Iterable[str | WeekDay],
                 use_task_logical_date: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.week_day = week_day
        self.use_task_logical_date = bool(use_task_logical_date)
        self._days = WeekDay.validate_week_day(week_day)

    def poke(self, context: Any) -> bool:
        if self.use_task_logical_date:
            moment = context.get("logical_date")
            if moment is None:
                raise ValueError(f"task {self.task_id!r}: use_task_logical_date=True, but this "
                                 "run has no logical date")
        else:
            moment = base._now()
        base.log.info("checking whether %s is one of the days %s", moment.date(),
                      sorted(WeekDay(d).name for d in self._days))
        return moment.isoweekday() in self._days
