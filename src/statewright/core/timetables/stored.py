"""Timetables as they are stored with a serialized DAG, and read back.

A statewright timetable is stored as ``{"type": <type_name>, **arguments}``. A timetable class
written by a user (in a DAG file or a plugin) is stored as ``{"type": "custom", "classpath",
"value": <its serialize()>, "summary", "description", "runs": [...]}``: a process in which that
class is registered (``Timetable._registry``: the process that parsed the file, or one that
loaded the plugin) rebuilds it with ``deserialize``; any other process (the scheduler never
imports DAG files) answers from ``runs``, the runs the class computed when the file was parsed
(see docs/decisions/custom-timetables.md).
"""

from __future__ import annotations

import bisect
from collections import deque
from datetime import datetime
from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.core.timetables.base import (
    DagRunInfo,
    Restriction,
    Timetable,
    TimetableError,
    classpath_of,
)

__all__ = [
    "HORIZON_AHEAD",
    "HORIZON_BEHIND",
    "PrecomputedTimetable",
    "deserialize_timetable",
    "precompute_runs",
    "serialize_timetable",
]

CUSTOM = "custom"
HORIZON_BEHIND = 200  # runs due at parse time kept (catchup: the most recent missed ones)
HORIZON_AHEAD = 100  # runs after parse time
_MAX_STEPS = 50_000


def serialize_timetable(timetable: Timetable, *, start_date: datetime | None = None,
                        end_date: datetime | None = None, catchup: bool = False,
                        now: datetime | None = None) -> dict[str, Any]:
    """The stored form of ``timetable``. A custom one also stores the runs it computes from
    the DAG's bounds at ``now`` (TimetableError when it raises)."""
    if timetable.is_builtin():
        return timetable.serialize()
    cls = type(timetable)
    try:
        value = timetable.serialize()
        summary, description = str(timetable.summary), str(timetable.description or "")
    except Exception as exc:
        raise TimetableError(f"timetable {cls.__name__} cannot be serialized: "
                             f"{type(exc).__name__}: {exc}") from exc
    stored: dict[str, Any] = {"type": CUSTOM, "classpath": classpath_of(cls), "value": value,
                              "summary": summary, "description": description}
    if now is not None:
        stored["runs"] = precompute_runs(timetable, start_date=start_date, end_date=end_date,
                                         catchup=catchup, now=now)
        stored["computed_at"] = now.isoformat()
    return stored


def precompute_runs(timetable: Timetable, *, start_date: datetime | None,
                    end_date: datetime | None, catchup: bool,
                    now: datetime) -> list[list[str]]:
    """The runs ``timetable`` gives from its first one: the last ``HORIZON_BEHIND`` due at
    ``now`` and the next ``HORIZON_AHEAD``, each ``[logical_date, start, end, run_after]``."""
    behind: deque[DagRunInfo] = deque(maxlen=HORIZON_BEHIND)
    ahead: list[DagRunInfo] = []
    last: DagRunInfo | None = None
    for _ in range(_MAX_STEPS):
        info = timetable.next_run(last_automated=last, start_date=start_date,
                                  end_date=end_date, catchup=catchup, now=now)
        if info is None or (last is not None and info.logical_date <= last.logical_date):
            break
        (behind if info.run_after <= now else ahead).append(info)
        if len(ahead) >= HORIZON_AHEAD:
            break
        last = info
    return [[i.logical_date.isoformat(), i.data_interval_start.isoformat(),
             i.data_interval_end.isoformat(), i.run_after.isoformat()]
            for i in [*behind, *ahead]]


class PrecomputedTimetable(Timetable):
    """A custom timetable whose class is not registered here: it answers from the runs the
    class computed when its DAG file was parsed (``dags reserialize`` computes them again)."""

    type_name = "precomputed"

    def __init__(self, stored: dict[str, Any]) -> None:
        self.stored = stored
        self.classpath = str(stored.get("classpath", "?"))
        self.summary = str(stored.get("summary") or self.classpath.rsplit(".", 1)[-1])
        self.description = str(stored.get("description") or "")
        self.runs = [_info(row) for row in stored.get("runs") or []]
        self._dates = [r.logical_date for r in self.runs]

    def _next(self, last: DagRunInfo | None, r: Restriction) -> DagRunInfo | None:
        lo = 0 if last is None else bisect.bisect_right(self._dates, last.logical_date)
        if not r.catchup:  # the latest run due now, or the first one after it
            due = bisect.bisect_right([x.run_after for x in self.runs], r.now)
            lo = max(lo, due - 1)
        if lo >= len(self.runs):
            return None
        info = self.runs[lo]
        if r.latest is not None and info.logical_date > r.latest:
            return None
        return info

    def serialize(self) -> dict[str, Any]:
        return dict(self.stored)


def _info(row: list[str]) -> DagRunInfo:
    logical, start, end, run_after = (datetime.fromisoformat(x) for x in row)
    return DagRunInfo(logical_date=logical, data_interval_start=start, data_interval_end=end,
                      run_after=run_after)


def deserialize_timetable(d: dict[str, Any]) -> Timetable:
    """Rebuild a timetable from its stored form, dispatching on ``d["type"]``."""
    kind = d.get("type") if isinstance(d, dict) else None
    if kind == CUSTOM:
        return _custom(d)
    cls = Timetable._registry.get(kind) if isinstance(kind, str) else None
    if cls is None and isinstance(kind, str):  # the partitioned timetables register on import
        import statewright.core.partitions  # noqa: F401

        cls = Timetable._registry.get(kind)
    if cls is None or not cls.is_builtin() or cls is PrecomputedTimetable:
        known = ", ".join(sorted(k for k, c in Timetable._registry.items() if c.is_builtin()))
        raise DagDefinitionError(
            f"stored timetable {d!r} has an unknown type {kind!r}; known types: {known}."
        )
    timetable: Timetable = cls._from_fields(d)
    return timetable


def _custom(d: dict[str, Any]) -> Timetable:
    cls = Timetable._registry.get(str(d.get("classpath")))
    if cls is None:
        return PrecomputedTimetable(d)
    try:
        timetable = cls.deserialize(d.get("value") or {})
    except Exception as exc:
        raise TimetableError(f"timetable {cls.__name__}.deserialize raised "
                             f"{type(exc).__name__}: {exc}") from exc
    return timetable
