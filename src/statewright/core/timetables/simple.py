"""Timetables without a period: manual-only (``schedule=None``) and ``"@once"``."""

from __future__ import annotations

from statewright.core.timetables.base import DagRunInfo, Restriction, Timetable

__all__ = ["NullTimetable", "OnceTimetable"]


class NullTimetable(Timetable):
    """``schedule=None``: never schedules; runs are triggered by hand (or by the API)."""

    type_name = "null"
    periodic = False
    can_be_scheduled = False
    summary = "None"

    def _next(self, last: DagRunInfo | None, r: Restriction) -> DagRunInfo | None:
        return None


class OnceTimetable(Timetable):
    """``"@once"``: one run at ``start_date`` (or ``now`` without one), whatever ``catchup``."""

    type_name = "once"
    periodic = False
    summary = "@once"

    def _next(self, last: DagRunInfo | None, r: Restriction) -> DagRunInfo | None:
        if last is not None:
            return None
        run_after = r.earliest or r.now
        if r.latest is not None and run_after > r.latest:
            return None
        return DagRunInfo.exact(run_after)
