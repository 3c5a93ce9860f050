"""Reading a DAG's schedule from its serialized form, and the next-run decision."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.core.timetables import DagRunInfo, parse_schedule
from statewright.services.scheduler.dag_schedule import ScheduleCache, next_fields, schedule_spec
from statewright.services.scheduler.dagrun_creation import decide

START = "2026-01-01T00:00:00+00:00"


def ser(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"dag_id": "d", "schedule": "@daily", "start_date": START,
                            "end_date": None, "timezone": "UTC", "catchup": False, "tasks": []}
    base.update(kw)
    return base


@pytest.mark.parametrize("fields, needle", [
    ({"schedule": "61 * * * *"}, "'61 * * * *'"),
    ({"schedule": "* * *"}, "expected 5 fields"),
    ({"schedule": "@fortnightly"}, "'@fortnightly'"),
    ({"schedule": "@continuous"}, "'@continuous'"),
    ({"timezone": "Mars/Olympus_Mons"}, "'Mars/Olympus_Mons'"),
    ({"end_date": "2025-01-01T00:00:00+00:00"}, "is before start_date"),
    ({"start_date": None}, "needs a start_date for schedule '@daily'"),
    ({"schedule": {"timedelta_seconds": -5}}, "must be positive"),
    ({"schedule": {"weird": 1}}, "not a schedule"),
    ({"start_date": "the first of May"}, "'the first of May'"),
])
def test_bad_schedules_name_the_value(fields: dict[str, Any], needle: str) -> None:
    with pytest.raises(DagDefinitionError) as exc:
        schedule_spec(ser(**fields))
    assert needle in str(exc.value)


def test_forms_of_schedules() -> None:
    assert schedule_spec(ser(schedule=None, start_date=None)).timetable.summary == "None"
    assert schedule_spec(ser(schedule="@once")).timetable.summary == "@once"
    delta = schedule_spec(ser(schedule={"timedelta_seconds": 3600.0}))
    assert delta.timetable.serialize() == {"type": "delta_trigger", "delta_seconds": 3600.0}
    berlin = schedule_spec(ser(schedule="0 6 * * *", timezone="Europe/Berlin", catchup=True))
    assert berlin.timetable.serialize()["timezone"] == "Europe/Berlin" and berlin.catchup
    # The same schedule gives the same (shared) timetable object.
    assert schedule_spec(ser()).timetable is schedule_spec(ser(dag_id="other")).timetable


def info(day: int, hour: int = 0) -> DagRunInfo:
    return DagRunInfo.exact(datetime(2026, 1, day, hour, tzinfo=UTC))


def test_decide_creates_the_stored_run_and_moves_on() -> None:
    tt = parse_schedule("@daily")
    now = datetime(2026, 1, 5, 1, tzinfo=UTC)

    def nxt(last: DagRunInfo | None) -> DagRunInfo | None:
        return tt.next_run(last_automated=last, start_date=info(1).logical_date,
                                   end_date=None, catchup=True, now=now)

    assert decide(info(2), nxt, catchup=True, now=now) == (info(2), info(3))


def test_decide_skips_an_overtaken_run_without_catchup() -> None:
    tt = parse_schedule("@daily")
    now = datetime(2026, 1, 9, 6, tzinfo=UTC)

    def nxt(last: DagRunInfo | None) -> DagRunInfo | None:
        return tt.next_run(last_automated=last, start_date=info(1).logical_date,
                                   end_date=None, catchup=False, now=now)

    assert decide(info(2), nxt, catchup=False, now=now) == (info(9), info(10))
    assert decide(info(9), nxt, catchup=False, now=now) == (info(9), info(10))


def test_cache_memoizes_per_now_and_next_fields() -> None:
    cache = ScheduleCache()
    spec = cache.spec("d", "h1", ser(catchup=True))
    assert cache.spec("d", "h1", lambda: pytest.fail("not loaded again")) is spec
    now = datetime(2026, 1, 3, tzinfo=UTC)
    first = cache.next_info(spec, None, now)
    assert first == info(1) and cache.next_info(spec, None, now) is first
    assert next_fields(first) == {
        "next_dagrun": first.logical_date, "next_dagrun_data_interval_start": first.logical_date,
        "next_dagrun_data_interval_end": first.logical_date,
        "next_dagrun_create_after": first.logical_date}
    assert set(next_fields(None).values()) == {None}
    assert cache.next_info(spec, info(1), now + timedelta(hours=1)) == info(2)
