"""A DAG's schedule read from its serialized form: timetable, bounds, and its next run.

The DAG processor validates schedules with ``schedule_spec`` when it syncs a DAG; the scheduler
reads the same spec (cached) when it creates runs. Timetables are immutable values, so DAGs
that share a schedule share one timetable object.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

from statewright.core.asset_conditions import AssetTriggeredTimetable, validate_condition
from statewright.core.errors import DagDefinitionError
from statewright.core.timetables import (
    DagRunInfo,
    Timetable,
    deserialize_timetable,
    parse_schedule,
    serialize_timetable,
    validate_schedule_args,
)

__all__ = [
    "ScheduleCache",
    "ScheduleSpec",
    "next_fields",
    "schedule_spec",
]

_NO_NEXT = {
    "next_dagrun": None,
    "next_dagrun_data_interval_start": None,
    "next_dagrun_data_interval_end": None,
    "next_dagrun_create_after": None,
}


@dataclass(frozen=True)
class ScheduleSpec:
    """What decides a DAG's automated runs."""

    timetable: Timetable
    start_date: datetime | None
    end_date: datetime | None
    catchup: bool

    def next_info(self, last: DagRunInfo | None, now: datetime) -> DagRunInfo | None:
        return self.timetable.next_run(
            last_automated=last, start_date=self.start_date, end_date=self.end_date,
            catchup=self.catchup, now=now)

    @cached_property
    def key(self) -> tuple[Any, ...]:
        return (_timetable_key(self.timetable), self.start_date, self.end_date, self.catchup)


_timetables: dict[str, Timetable] = {}
_timetables_lock = threading.Lock()


def _timetable_key(timetable: Timetable) -> str:
    return json.dumps(serialize_timetable(timetable), sort_keys=True, default=str)


def _schedule_value(raw: Any) -> Any:
    if isinstance(raw, Mapping):
        if set(raw) == {"timedelta_seconds"}:
            return timedelta(seconds=float(raw["timedelta_seconds"]))
        if "assets" in raw:  # asset-triggered runs come from asset_runs; time runs from here
            validate_condition(raw["assets"], "schedule")
            tt = raw.get("timetable")
            return AssetTriggeredTimetable() if tt is None else deserialize_timetable(tt)
        if isinstance(raw.get("timetable"), Mapping):  # DAG(schedule=<a Timetable>)
            return deserialize_timetable(dict(raw["timetable"]))
        raise DagDefinitionError(f"schedule {dict(raw)!r} is not a schedule statewright knows.")
    return raw


def _parse_timetable(schedule: Any, timezone: str) -> Timetable:
    if isinstance(schedule, Timetable):
        return schedule
    key = json.dumps([schedule if not isinstance(schedule, timedelta)
                      else schedule.total_seconds(), timezone], default=str)
    with _timetables_lock:
        cached = _timetables.get(key)
    if cached is None:
        cached = parse_schedule(schedule, timezone=timezone)
        with _timetables_lock:
            _timetables[key] = cached
    return cached


def _moment(value: Any, what: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        raise DagDefinitionError(f"{what} {value!r} is not an ISO date and time.") from None


def schedule_spec(serialized: Mapping[str, Any]) -> ScheduleSpec:
    """The schedule of a serialized DAG; DagDefinitionError naming the bad value."""
    schedule = _schedule_value(serialized.get("schedule"))
    timetable = _parse_timetable(schedule, str(serialized.get("timezone") or "UTC"))
    start = _moment(serialized.get("start_date"), "start_date")
    end = _moment(serialized.get("end_date"), "end_date")
    validate_schedule_args(timetable, start, end)
    return ScheduleSpec(timetable, start, end, bool(serialized.get("catchup", False)))


def next_fields(info: DagRunInfo | None) -> dict[str, datetime | None]:
    """The ``dag`` columns that say when and which run comes next."""
    if info is None:
        return dict(_NO_NEXT)
    return {
        "next_dagrun": info.logical_date,
        "next_dagrun_data_interval_start": info.data_interval_start,
        "next_dagrun_data_interval_end": info.data_interval_end,
        "next_dagrun_create_after": info.run_after,
    }


class ScheduleCache:
    """``ScheduleSpec`` per (dag_id, dag_hash), and next-run answers memoized per ``now``.

    DAGs with the same timetable, bounds and last run get the same answer; computing it once
    per scheduler loop keeps thousands of DAGs on one schedule cheap.
    """

    def __init__(self, max_entries: int = 20000) -> None:
        self._specs: dict[tuple[str, str], ScheduleSpec] = {}
        self._answers: dict[tuple[Any, ...], DagRunInfo | None] = {}
        self._answers_at: datetime | None = None
        self._max = max_entries

    def spec(self, dag_id: str, dag_hash: str, serialized: Any) -> ScheduleSpec:
        key = (dag_id, dag_hash)
        spec = self._specs.get(key)
        if spec is None:
            if len(self._specs) >= self._max:
                self._specs.clear()
            spec = self._specs[key] = schedule_spec(
                serialized() if callable(serialized) else serialized)
        return spec

    def next_info(self, spec: ScheduleSpec, last: DagRunInfo | None,
                  now: datetime) -> DagRunInfo | None:
        if self._answers_at != now or len(self._answers) >= self._max:
            self._answers.clear()
            self._answers_at = now
        key = (*spec.key, last)
        if key not in self._answers:
            self._answers[key] = spec.next_info(last, now)
        return self._answers[key]
