"""``MultipleCronTriggerTimetable`` and ``EventsTimetable`` (Airflow's names and arguments)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from datetime import datetime, timedelta, tzinfo
from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.core.timetables._time import as_utc
from statewright.core.timetables.base import DagRunInfo, DataInterval, Restriction, Timetable
from statewright.core.timetables.periodic import CronTriggerTimetable

__all__ = ["EventsTimetable", "MultipleCronTriggerTimetable"]


class MultipleCronTriggerTimetable(Timetable):
    """Runs at the times of several crons: the earliest next time of any of them."""

    type_name = "multiple_cron_trigger"

    def __init__(self, *crons: str, timezone: str | tzinfo = "UTC",
                 interval: timedelta = timedelta(0),
                 run_immediately: bool | timedelta = False) -> None:
        if not crons:
            raise DagDefinitionError("MultipleCronTriggerTimetable needs at least one cron.")
        self.timetables = [CronTriggerTimetable(c, timezone=timezone, interval=interval,
                                                run_immediately=run_immediately)
                           for c in crons]
        self.summary = ", ".join(t.summary for t in self.timetables)

    def _next(self, last: DagRunInfo | None, r: Restriction) -> DagRunInfo | None:
        infos = [i for t in self.timetables if (i := t._next(last, r)) is not None]
        return min(infos, key=lambda i: i.run_after) if infos else None

    def infer_manual_data_interval(self, run_after: datetime) -> DataInterval:
        return self.timetables[0].infer_manual_data_interval(run_after=run_after)

    def _fields(self) -> dict[str, Any]:
        first = self.timetables[0]._fields()
        return {"crons": [t.summary for t in self.timetables],
                **{k: v for k, v in first.items() if k != "expression"}}

    @classmethod
    def _from_fields(cls, data: dict[str, Any]) -> Any:
        ri = data.get("run_immediately", False)
        return cls(*data["crons"], timezone=data["timezone"],
                   interval=timedelta(seconds=float(data.get("interval", 0))),
                   run_immediately=ri if isinstance(ri, bool) else timedelta(seconds=ri))


class EventsTimetable(Timetable):
    """Runs at a fixed list of dates (``event_dates``), each a zero-width data interval.

    ``restrict_to_events``: a manual run's data interval is the latest event at or before
    it, instead of the trigger time.
    """

    type_name = "events"

    def __init__(self, event_dates: Iterable[datetime], restrict_to_events: bool = False,
                 presorted: bool = False, description: str | None = None) -> None:
        dates = [as_utc(d, "event date") for d in event_dates]
        self.event_dates = dates if presorted else sorted(dates)
        if not self.event_dates:
            raise DagDefinitionError("EventsTimetable needs at least one event date.")
        self.restrict_to_events = restrict_to_events
        self.summary = f"{len(self.event_dates)} events"
        self.description = description or (
            f"{len(self.event_dates)} events between {self.event_dates[0].isoformat()} and "
            f"{self.event_dates[-1].isoformat()}")

    def _next(self, last: DagRunInfo | None, r: Restriction) -> DagRunInfo | None:
        dates = self.event_dates
        lo = 0 if last is None else bisect.bisect_right(dates, last.logical_date)
        if r.earliest is not None:
            lo = max(lo, bisect.bisect_left(dates, r.earliest))
        if not r.catchup:  # missed events: only the latest one due now
            due = bisect.bisect_right(dates, r.now)
            lo = max(lo, due - 1)
        if lo >= len(dates):
            return None
        event = dates[lo]
        if r.latest is not None and event > r.latest:
            return None
        return DagRunInfo.exact(event)

    def infer_manual_data_interval(self, run_after: datetime) -> DataInterval:
        at = as_utc(run_after, "run_after")
        if self.restrict_to_events:
            i = bisect.bisect_right(self.event_dates, at)
            if i:
                return DataInterval.exact(self.event_dates[i - 1])
        return DataInterval.exact(at)

    def _fields(self) -> dict[str, Any]:
        return {"event_dates": [d.isoformat() for d in self.event_dates],
                "restrict_to_events": self.restrict_to_events,
                "description": self.description}

    @classmethod
    def _from_fields(cls, data: dict[str, Any]) -> Any:
        return cls([datetime.fromisoformat(d) for d in data["event_dates"]],
                   restrict_to_events=bool(data.get("restrict_to_events")), presorted=True,
                   description=data.get("description"))
