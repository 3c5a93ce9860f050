"""``DateTimeSensor``, ``TimeDeltaSensor`` and ``TimeSensor``: wait for a moment in time."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta, tzinfo
from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.sdk.sensors import base
from statewright.sdk.sensors.base import BaseSensor
from statewright.sdk.triggers.temporal import DateTimeTrigger

__all__ = ["DateTimeSensor", "TimeDeltaSensor", "TimeSensor", "TimeSensorAsync"]


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


class TimeSensor(_MomentSensor):
    """Succeed once the clock reaches ``target_time`` (a ``datetime.time``) of today, in the
    DAG's timezone.

    "Today" is Airflow's: the day, in the DAG's timezone, on which the task is picked up, not
    the day of the run's data interval (so a backfilled run waits for today's
    ``target_time``; ``DateTimeSensor`` with a templated target waits for the run's own day).
    The moment is fixed when the try starts (again at each reschedule); the ``tzinfo`` of
    ``target_time`` is ignored, as in Airflow. ``deferrable=True`` waits in the triggerer
    (a ``DateTimeTrigger`` at that moment).
    """

    def __init__(self, *, target_time: time, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(target_time, time):
            raise DagDefinitionError(
                f"sensor {self.task_id!r}: target_time must be a datetime.time (a time of "
                f"day), got {type(target_time).__name__}; use DateTimeSensor to wait for a "
                "date and time")
        self.target_time = target_time
        self.target_datetime: datetime | None = None
        """The moment the running try waits for (UTC), set when the try starts."""

    def execute(self, context: Any) -> Any:
        self.target_datetime = self.today_at_target(context)
        return super().execute(context)

    def today_at_target(self, context: Any) -> datetime:
        """``target_time`` on the current day in the DAG's timezone, as a UTC datetime."""
        zone = self._zone(context)
        today = base._now().astimezone(zone).date()
        local = datetime.combine(today, self.target_time.replace(tzinfo=None), tzinfo=zone)
        return local.astimezone(UTC)

    def target(self, context: Any) -> datetime:
        return self.target_datetime or self.today_at_target(context)

    def _zone(self, context: Any) -> tzinfo:
        dag = context.get("dag") or self.dag
        return getattr(dag, "timezone", None) or UTC


class TimeSensorAsync(TimeSensor):
    """``TimeSensor`` with ``deferrable=True`` (the name Airflow keeps for older files)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["deferrable"] = True
        super().__init__(**kwargs)
