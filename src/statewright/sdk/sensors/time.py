"""``DateTimeSensor`` and ``TimeDeltaSensor``: wait for a moment in time."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.sdk.sensors import base
from statewright.sdk.sensors.base import BaseSensor
from statewright.sdk.triggers.temporal import DateTimeTrigger

__all__ = ["DateTimeSensor", "TimeDeltaSensor"]


class _MomentSensor(BaseSensor):
    supports_deferral = True

    def target(self, context: Any) -> datetime:
        raise NotImplementedError(f"{type(self).__name__} must implement target(context)")

    def poke(self, context: Any) -> bool:
        return base._now() >= self.target(context)

    def execute_deferrable(self, context: Any) -> Any:
        moment = self.target(context)
        if base._now() >= moment:
            return None
        self.defer(trigger=DateTimeTrigger(moment), method_name="execute_complete",
                   timeout=timedelta(seconds=self.timeout))


class DateTimeSensor(_MomentSensor):
    """Succeed once the clock reaches ``target_time`` (an aware datetime or an ISO string)."""

    template_fields = ("target_time",)

    def __init__(self, *, target_time: datetime | str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(target_time, str):
            try:
                target_time = datetime.fromisoformat(target_time)
            except ValueError:
                raise DagDefinitionError(
                    f"sensor {self.task_id!r}: target_time {target_time!r} is not an ISO 8601 "
                    "date and time") from None
        if not isinstance(target_time, datetime):
            raise DagDefinitionError(
                f"sensor {self.task_id!r}: target_time must be a datetime or an ISO string, "
                f"got {type(target_time).__name__}")
        if target_time.tzinfo is None:
            raise DagDefinitionError(
                f"sensor {self.task_id!r}: target_time {target_time.isoformat()} has no "
                "timezone; pass an aware datetime (e.g. tzinfo=timezone.utc)")
        self.target_time = target_time

    def target(self, context: Any) -> datetime:
        return self.target_time


class TimeDeltaSensor(_MomentSensor):
    """Succeed ``delta`` after the end of the run's data interval (Airflow's rule); for a run
    without one, after its logical date."""

    def __init__(self, *, delta: timedelta | float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(delta, timedelta):
            if isinstance(delta, bool) or not isinstance(delta, (int, float)):
                raise DagDefinitionError(
                    f"sensor {self.task_id!r}: delta must be a timedelta or seconds")
            delta = timedelta(seconds=delta)
        self.delta = delta

    def target(self, context: Any) -> datetime:
        anchor = (context.get("data_interval_end") or context.get("logical_date")
                  or base._now())
        return anchor + self.delta
