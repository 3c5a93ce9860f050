"""Partitioned timetables: ``CronPartitionTimetable`` and ``PartitionedAtRuntime``.

``CronPartitionTimetable`` runs like ``CronTriggerTimetable`` and gives each run a partition
key: its cron time in the DAG's time zone, written with ``key_format`` (Airflow's default
``%Y-%m-%dT%H:%M:%S``). ``PartitionedAtRuntime`` never schedules: its runs are triggered (with
a ``partition_key``) or their tasks name the partitions they wrote with
``outlet_events[asset].add_partitions(...)``.
"""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo
from typing import Any

from statewright.core.partitions.mappers import DEFAULT_INPUT_FORMAT, PartitionKeyError
from statewright.core.timetables import CronTriggerTimetable, DagRunInfo, NullTimetable
from statewright.core.timetables.base import Restriction

__all__ = ["CronPartitionTimetable", "PartitionedAtRuntime", "check_partition_key"]


class CronPartitionTimetable(CronTriggerTimetable):
    """A cron schedule whose runs each carry the partition key of their cron time."""

    type_name = "cron_partition"
    partitioned = True
    needs_start_date = False

    def __init__(self, cron: str, *, timezone: str | tzinfo = "UTC",
                 key_format: str = DEFAULT_INPUT_FORMAT,
                 interval: timedelta = timedelta(0),
                 run_immediately: bool | timedelta = False) -> None:
        super().__init__(cron, timezone=timezone, interval=interval,
                         run_immediately=run_immediately)
        self.key_format = key_format

    def partition_key_of(self, moment: datetime) -> str:
        return moment.astimezone(self.timezone).strftime(self.key_format)

    def _next(self, last: DagRunInfo | None, r: Restriction) -> DagRunInfo | None:
        info = super()._next(last, r)
        if info is None:
            return None
        return DagRunInfo(logical_date=info.logical_date,
                          data_interval_start=info.data_interval_start,
                          data_interval_end=info.data_interval_end, run_after=info.run_after,
                          partition_key=self.partition_key_of(info.logical_date),
                          partition_date=info.logical_date)

    def check_key(self, key: str) -> datetime:
        """The partition date of ``key``; PartitionKeyError when it is not one of this
        timetable's keys (wrong format, or not a cron time)."""
        try:
            local = datetime.strptime(key, self.key_format).replace(tzinfo=self.timezone)
        except ValueError:
            raise PartitionKeyError(
                f"partition key {key!r} does not match this DAG's timetable: expected the "
                f"format {self.key_format!r} (for example "
                f"{self.partition_key_of(datetime.now(self.timezone))!r})") from None
        if self._align_to_prev(local) != local:
            raise PartitionKeyError(
                f"partition key {key!r} is not a time of the schedule {self.summary!r}")
        return self._align_to_prev(local)

    def _fields(self) -> dict[str, Any]:
        fields = super()._fields()
        if self.key_format != DEFAULT_INPUT_FORMAT:
            fields["key_format"] = self.key_format
        return fields

    @classmethod
    def _from_fields(cls, data: dict[str, Any]) -> Any:
        return cls(data["expression"], timezone=data["timezone"],
                   key_format=data.get("key_format", DEFAULT_INPUT_FORMAT),
                   interval=timedelta(seconds=float(data.get("interval", 0))))


class PartitionedAtRuntime(NullTimetable):
    """Never scheduled; each run's partition key comes from its trigger or its tasks."""

    type_name = "partitioned_at_runtime"
    summary = "Partitioned at runtime"
    partitioned_at_runtime = True


def check_partition_key(timetable: Any, key: str) -> datetime | None:
    """The partition date of a key given for a run of a DAG with ``timetable``; raises
    PartitionKeyError when the key does not match it (None: keys are free-form)."""
    if isinstance(timetable, CronPartitionTimetable):
        return timetable.check_key(key)
    if not isinstance(key, str) or not key.strip():
        raise PartitionKeyError(f"partition key {key!r} must be a non-empty string")
    return None
