"""A DAG's calendar: how many runs per day (or hour) and state, as Airflow 3's calendar view
reads them (``GET /ui/calendar/{dag_id}`` there), with the runs the schedule plans next."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel

from statewright.api import reads
from statewright.api.deps import reading
from statewright.api.errors import BadRequest
from statewright.core.clock import utcnow
from statewright.core.errors import StatewrightError
from statewright.db.repositories import run_calendar

router = APIRouter(tags=["DAG runs"])
PLANNED_MAX = 1000
"""At most this many planned runs are counted (a minutely schedule would plan 500,000 a year)."""
PLANNED_HORIZON = timedelta(days=366)
"""Without an upper bound, planned runs are counted this far ahead of now."""


class CalendarEntry(BaseModel):
    date: datetime
    """The day (or hour) at its start, UTC."""
    state: str
    """A run state, or ``planned`` for a run the schedule will create."""
    count: int


class CalendarCollection(BaseModel):
    dag_runs: list[CalendarEntry]
    total_entries: int


Moment = Annotated[datetime | None, Query(description="An ISO 8601 date and time with its "
                                                      "time zone (e.g. 2026-01-01T00:00:00Z).")]


@router.get("/dags/{dag_id}/calendar", response_model=CalendarCollection,
            responses={404: {"description": "Unknown DAG"},
                       422: {"description": "A date without a time zone, or bounds that "
                                            "exclude every date"}})
def calendar(
    request: Request,
    dag_id: str,
    logical_date_gte: Moment = None,
    logical_date_gt: Moment = None,
    logical_date_lte: Moment = None,
    logical_date_lt: Moment = None,
    granularity: Annotated[Literal["daily", "hourly"], Query(
        description="Count runs per day or per hour (UTC).")] = "daily",
) -> CalendarCollection:
    """How many runs of the DAG each day (or hour) has, per state; days after the DAG's next
    run also count the runs its schedule plans (state ``planned``, at most 1,000)."""
    bounds = {"logical_date_gte": logical_date_gte, "logical_date_gt": logical_date_gt,
              "logical_date_lte": logical_date_lte, "logical_date_lt": logical_date_lt}
    _check_bounds(bounds)
    counts: Counter[tuple[datetime, str]] = Counter()
    with reading(request) as conn:
        row = reads.dag_row(conn, dag_id)
        for moment, state, n in run_calendar.run_counts(
                conn, dag_id, hourly=granularity == "hourly", gte=logical_date_gte,
                lte=logical_date_lte, gt=logical_date_gt, lt=logical_date_lt):
            counts[(moment, state)] += n
    for moment in _planned(row, bounds):
        counts[(_bucket(moment, granularity), "planned")] += 1
    entries = [CalendarEntry(date=d, state=st, count=n)
               for (d, st), n in sorted(counts.items())]
    return CalendarCollection(dag_runs=entries, total_entries=len(entries))


def _check_bounds(bounds: dict[str, datetime | None]) -> None:
    naive = [name for name, v in bounds.items() if v is not None and v.tzinfo is None]
    if naive:
        raise BadRequest(f"Invalid request: {', '.join(naive)} has no time zone; give one, "
                         "e.g. 2026-01-01T00:00:00Z.")
    for name, v in bounds.items():
        try:
            if v is not None:
                v.astimezone(UTC)
        except OverflowError:
            raise BadRequest(f"Invalid request: {name} {v.isoformat()} is out of range in UTC."
                             ) from None
    lower = [v for k, v in bounds.items() if v is not None and k.endswith(("gte", "gt"))]
    upper = [v for k, v in bounds.items() if v is not None and k.endswith(("lte", "lt"))]
    if lower and upper and max(lower) > min(upper):
        raise BadRequest("Invalid request: the lower bound of logical_date is after its upper "
                         "bound; no date lies between them.")


def _bucket(moment: datetime, granularity: str) -> datetime:
    moment = moment.astimezone(UTC)
    if granularity == "hourly":
        return moment.replace(minute=0, second=0, microsecond=0)
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _planned(row: Any, bounds: dict[str, datetime | None]) -> list[datetime]:
    """The logical dates of the runs the DAG's schedule creates from its next run on, within
    the bounds (none for a paused or inactive DAG, or one without a time-based schedule)."""
    first = row.next_dagrun
    if first is None or row.is_paused or not row.is_active:
        return []
    from statewright.services.scheduler.dag_schedule import schedule_spec

    try:
        spec = schedule_spec(row.serialized or {})
    except StatewrightError:
        return []  # a schedule the DAG processor would refuse plans nothing
    starts = [v for k, v in bounds.items() if v is not None and k.endswith(("gte", "gt"))]
    first = max([first, *starts])  # from the lower bound on: every step is counted
    ends = [v for k, v in bounds.items() if v is not None and k.endswith(("lte", "lt"))]
    last = min([*ends, *([spec.end_date] if spec.end_date else [])],
               default=utcnow() + PLANNED_HORIZON)
    out: list[datetime] = []
    try:
        for info in spec.timetable.iter_between(first, last):
            if len(out) >= PLANNED_MAX:
                break
            if _within(info.logical_date, bounds):
                out.append(info.logical_date)
    except StatewrightError:
        return out  # a user's timetable that fails part-way plans what it gave
    return out


def _within(moment: datetime, bounds: dict[str, datetime | None]) -> bool:
    checks = {"logical_date_gte": lambda b: moment >= b, "logical_date_gt": lambda b: moment > b,
              "logical_date_lte": lambda b: moment <= b, "logical_date_lt": lambda b: moment < b}
    return all(b is None or checks[k](b) for k, b in bounds.items())
