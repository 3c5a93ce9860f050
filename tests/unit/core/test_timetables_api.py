"""Airflow's Timetable API: a user's timetable, Events and MultipleCron, storage, words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pendulum
import pytest

from statewright.core.errors import DagDefinitionError
from statewright.core.timetables import (
    CronTriggerTimetable,
    DagRunInfo,
    DataInterval,
    DeltaTriggerTimetable,
    EventsTimetable,
    MultipleCronTriggerTimetable,
    PrecomputedTimetable,
    TimeRestriction,
    Timetable,
    TimetableError,
    describe_timetable,
    deserialize_timetable,
    parse_schedule,
    serialize_timetable,
)

D = datetime(2026, 1, 1, tzinfo=UTC)  # a Thursday


class Workdays(Timetable):
    """Airflow's AfterWorkdayTimetable without holidays, with pendulum datetimes."""

    def infer_manual_data_interval(self, run_after: datetime) -> DataInterval:
        start = pendulum.instance(run_after).start_of("day").subtract(days=1)
        while start.weekday() >= 5:
            start = start.subtract(days=1)
        return DataInterval(start=start, end=start.add(days=1))

    def next_dagrun_info(self, *, last_automated_data_interval: DataInterval | None,
                         restriction: TimeRestriction) -> DagRunInfo | None:
        if last_automated_data_interval is not None:
            start = pendulum.instance(last_automated_data_interval.start).add(days=1)
        elif restriction.earliest is None:
            return None
        else:
            start = pendulum.instance(restriction.earliest)
        while start.weekday() >= 5:
            start = start.add(days=1)
        if restriction.latest is not None and start > restriction.latest:
            return None
        return DagRunInfo.interval(start=start, end=start.add(days=1))


class Broken(Timetable):
    def next_dagrun_info(self, *, last_automated_data_interval: DataInterval | None,
                         restriction: TimeRestriction) -> DagRunInfo | None:
        raise RuntimeError("calendar service down")


def walk(tt: Timetable, n: int, *, catchup: bool = True, now: datetime = D) -> list[datetime]:
    out: list[datetime] = []
    last = None
    for _ in range(n):
        info = tt.next_run(last_automated=last, start_date=D, end_date=None, catchup=catchup,
                           now=now)
        if info is None:
            break
        out.append(info.logical_date)
        last = info
    return out


def test_a_user_timetable_is_driven_through_airflows_api() -> None:
    days = walk(Workdays(), 4)
    assert [d.day for d in days] == [1, 2, 5, 6]  # Thu, Fri, then Mon, Tue
    assert all(type(d) is datetime and d.tzinfo is UTC for d in days)
    interval = Workdays().infer_manual_data_interval(run_after=datetime(2026, 1, 5, 9,
                                                                        tzinfo=UTC))
    assert interval.start.day == 2 and interval.end.day == 3  # Friday, over the weekend


def test_a_user_timetable_gets_its_name_as_summary_and_is_registered() -> None:
    assert Workdays().summary == "Workdays"
    assert Timetable._registry[f"{__name__}.Workdays"] is Workdays
    assert CronTriggerTimetable("@daily").summary == "@daily"


def test_a_timetable_that_raises_is_reported_by_name() -> None:
    with pytest.raises(TimetableError, match=r"Broken\.next_dagrun_info raised RuntimeError: "
                                             r"calendar service down"):
        walk(Broken(), 1)


def test_a_naive_answer_is_refused() -> None:
    class Naive(Timetable):
        def next_dagrun_info(self, *, last_automated_data_interval: DataInterval | None,
                             restriction: TimeRestriction) -> DagRunInfo | None:
            return DagRunInfo.exact(datetime(2026, 1, 1))

    with pytest.raises(TimetableError, match="no time zone"):
        walk(Naive(), 1)


def test_a_user_timetable_is_stored_with_the_runs_it_computed() -> None:
    now = datetime(2026, 1, 8, 12, tzinfo=UTC)
    stored = serialize_timetable(Workdays(), start_date=D, end_date=None, catchup=True, now=now)
    assert stored["type"] == "custom" and stored["classpath"].endswith(".Workdays")
    registered = deserialize_timetable(stored)
    assert isinstance(registered, Workdays)
    # Where the class is not registered (the scheduler), the precomputed runs answer.
    del Timetable._registry[stored["classpath"]]
    try:
        elsewhere = deserialize_timetable(stored)
    finally:
        Timetable._registry[stored["classpath"]] = Workdays
    assert isinstance(elsewhere, PrecomputedTimetable)
    assert elsewhere.summary == "Workdays"
    assert walk(elsewhere, 5, now=now) == walk(Workdays(), 5, now=now)
    # Without catchup: the latest run due at now, then the ones after it.
    assert [d.day for d in walk(elsewhere, 2, catchup=False, now=now)] == [7, 8]


def test_events_timetable_runs_at_each_event() -> None:
    events = [D + timedelta(days=d) for d in (10, 2, 5)]
    tt = EventsTimetable(event_dates=events, restrict_to_events=True, description="releases")
    assert walk(tt, 5) == sorted(events)
    assert walk(tt, 5, catchup=False, now=D + timedelta(days=6)) == [
        D + timedelta(days=5), D + timedelta(days=10)]
    assert tt.infer_manual_data_interval(run_after=D + timedelta(days=7)).start == \
        D + timedelta(days=5)
    again = deserialize_timetable(serialize_timetable(tt))
    assert again == tt and describe_timetable(again) == "releases"


def test_multiple_cron_runs_at_the_earliest_of_its_crons() -> None:
    tt = MultipleCronTriggerTimetable("0 6 * * *", "30 18 * * *", timezone="UTC")
    got = walk(tt, 4)
    assert [(d.day, d.hour, d.minute) for d in got] == [(1, 6, 0), (1, 18, 30), (2, 6, 0),
                                                        (2, 18, 30)]
    assert deserialize_timetable(serialize_timetable(tt)) == tt


def test_trigger_timetables_take_an_interval() -> None:
    tt = CronTriggerTimetable("0 6 * * *", timezone="UTC", interval=timedelta(hours=6))
    info = tt.next_run(last_automated=None, start_date=D, end_date=None, catchup=True, now=D)
    assert info is not None
    assert (info.data_interval_start.hour, info.data_interval_end.hour) == (0, 6)
    assert deserialize_timetable(serialize_timetable(tt)) == tt
    delta = DeltaTriggerTimetable(timedelta(hours=2), interval=timedelta(hours=1))
    assert deserialize_timetable(serialize_timetable(delta)) == delta


@pytest.mark.parametrize("schedule, words", [
    ("@daily", "At 00:00, every day (UTC)"),
    ("30 6 * * 1-5", "At 06:30, on weekdays (Monday to Friday) (UTC)"),
    ("15 * * * *", "Every hour at minute 15 (UTC)"),
    ("0 9 1 * *", "At 09:00, on day 1 of the month (UTC)"),
    (None, "Never on its own: runs only when triggered"),
    ("@once", "Once, at the start date"),
    (timedelta(hours=4), "Every 4 hours from the start date"),
    ("30 22 * * sun,wed", "At 22:30, on Sunday and Wednesday (UTC)"),
    ("0 0 * * 1,3,5", "At 00:00, on Monday, Wednesday and Friday (UTC)"),
    ("*/15 * * * *", "Every 15 minutes (UTC)"),
    ("* * * * *", "Every minute (UTC)"),
    ("0 */4 * * *", "Every 4 hours at minute 0 (UTC)"),
    ("5 4 1-3 * *", "At 04:05, on day 1-3 of the month (UTC)"),
    ("0 12 * 6 0-6", "At 12:00, in June, on Sunday to Saturday (UTC)"),
])
def test_a_schedule_is_described_in_words(schedule: object, words: str) -> None:
    assert describe_timetable(parse_schedule(schedule)) == words  # type: ignore[arg-type]


def test_an_unknown_stored_type_is_refused_with_the_known_ones() -> None:
    with pytest.raises(DagDefinitionError, match=r"unknown type 'nope'; known types: .*cron"):
        deserialize_timetable({"type": "nope"})


class RuntimeKeyed(CronTriggerTimetable):
    """Airflow's ScheduledRuntimePartitionTimetable: a user's subclass of a built-in."""

    partitioned_at_runtime = True


def test_a_user_subclass_of_a_builtin_keeps_its_arguments_when_stored() -> None:
    tt = RuntimeKeyed("15 * * * *", timezone="UTC")
    stored = serialize_timetable(tt)
    assert stored["type"] == "custom" and stored["value"]["expression"] == "15 * * * *"
    again = deserialize_timetable(stored)
    assert type(again) is RuntimeKeyed and again.summary == "15 * * * *"
    assert walk(again, 2) == walk(CronTriggerTimetable("15 * * * *"), 2)


def test_dag_run_info_is_built_the_airflow_way_too() -> None:
    start, end = D, D + timedelta(days=1)
    info = DagRunInfo(run_after=end, data_interval=DataInterval(start, end))
    assert info == DagRunInfo.interval(start, end)
    assert info.logical_date == start and info.data_interval == (start, end)
    assert DagRunInfo(run_after=end) == DagRunInfo.exact(end)
    with pytest.raises(TypeError, match="needs run_after"):
        DagRunInfo()
