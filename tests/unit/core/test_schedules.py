"""Timetables: simulated scheduling with an injected ``now`` (nothing sleeps)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from enum import StrEnum
from zoneinfo import ZoneInfo

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.core.timetables import (
    CronDataIntervalTimetable,
    CronTriggerTimetable,
    DagRunInfo,
    DeltaDataIntervalTimetable,
    DeltaTriggerTimetable,
    NullTimetable,
    OnceTimetable,
    Timetable,
    deserialize_timetable,
    parse_schedule,
    run_id_for,
    validate_schedule_args,
)

BERLIN = ZoneInfo("Europe/Berlin")
JAN_1 = datetime(2026, 1, 1, tzinfo=UTC)


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def simulate(
    timetable: Timetable,
    *,
    start_date: datetime | None,
    catchup: bool,
    begin: datetime,
    until: datetime,
    step: timedelta = timedelta(hours=1),
    end_date: datetime | None = None,
    last: DagRunInfo | None = None,
) -> list[DagRunInfo]:
    """A scheduler loop: at every tick create each run that is due, then advance the clock."""
    runs: list[DagRunInfo] = []
    now = begin
    while now <= until:
        while True:
            info = timetable.next_run(
                last_automated=last,
                start_date=start_date,
                end_date=end_date,
                catchup=catchup,
                now=now,
            )
            if info is None or info.run_after > now:
                break
            runs.append(info)
            last = info
        now += step
    return runs


def assert_utc_and_increasing(runs: list[DagRunInfo]) -> None:
    for info in runs:
        for moment in (
            info.logical_date,
            info.data_interval_start,
            info.data_interval_end,
            info.run_after,
        ):
            assert moment.tzinfo is UTC
            assert moment.fold == 0
    dates = [info.logical_date for info in runs]
    assert all(a < b for a, b in itertools.pairwise(dates))


def days(first: date, count: int) -> list[datetime]:
    return [
        datetime(first.year, first.month, first.day, tzinfo=UTC) + timedelta(d)
        for d in range(count)
    ]


# --- @daily over a month -----------------------------------------------------------------


def test_daily_catchup_creates_every_run_from_start_date() -> None:
    timetable = parse_schedule("@daily")
    # The scheduler first looks on 1 Feb at noon: the whole of January is caught up at once.
    runs = simulate(
        timetable,
        start_date=JAN_1,
        catchup=True,
        begin=utc(2026, 2, 1, 12),
        until=utc(2026, 2, 1, 12),
    )
    assert [r.logical_date for r in runs] == days(date(2026, 1, 1), 32)
    for info in runs:  # Airflow 3 trigger semantics: all four are the cron time
        assert (
            info.data_interval_start
            == info.data_interval_end
            == info.run_after
            == info.logical_date
        )
    assert_utc_and_increasing(runs)


def test_daily_catchup_simulated_hour_by_hour_over_a_month() -> None:
    runs = simulate(
        parse_schedule("@daily"),
        start_date=JAN_1,
        catchup=True,
        begin=JAN_1 - timedelta(hours=5),
        until=utc(2026, 1, 31, 23),
    )
    assert [r.logical_date for r in runs] == days(date(2026, 1, 1), 31)


def test_daily_without_catchup_starts_at_the_latest_due_run() -> None:
    # start_date 1 Jan, first looked at on 10 Jan 13:00: only 10 Jan 00:00 is created, then
    # one run per day as the clock passes midnight.
    runs = simulate(
        parse_schedule("@daily"),
        start_date=JAN_1,
        catchup=False,
        begin=utc(2026, 1, 10, 13),
        until=utc(2026, 1, 31, 23),
    )
    assert [r.logical_date for r in runs] == days(date(2026, 1, 10), 22)
    assert_utc_and_increasing(runs)


def test_daily_without_catchup_skips_a_paused_week() -> None:
    timetable = parse_schedule("@daily")
    last = DagRunInfo.exact(utc(2026, 1, 5))
    info = timetable.next_run(
        last_automated=last, start_date=JAN_1, end_date=None, catchup=False, now=utc(2026, 1, 12, 9)
    )
    assert info == DagRunInfo.exact(utc(2026, 1, 12))
    caught_up = timetable.next_run(
        last_automated=last, start_date=JAN_1, end_date=None, catchup=True, now=utc(2026, 1, 12, 9)
    )
    assert caught_up == DagRunInfo.exact(utc(2026, 1, 6))


def test_daily_without_catchup_before_start_date_waits_for_it() -> None:
    info = parse_schedule("@daily").next_run(
        last_automated=None,
        start_date=utc(2026, 3, 1, 6),
        end_date=None,
        catchup=False,
        now=JAN_1,
    )
    assert info == DagRunInfo.exact(utc(2026, 3, 2))  # aligned to the next midnight


def test_next_run_is_in_the_future_once_the_due_run_exists() -> None:
    timetable = parse_schedule("@daily")
    now = utc(2026, 1, 10, 0, 0, 30)
    first = timetable.next_run(
        last_automated=None, start_date=JAN_1, end_date=None, catchup=False, now=now
    )
    assert first is not None and first.logical_date == utc(2026, 1, 10)
    second = timetable.next_run(
        last_automated=first, start_date=JAN_1, end_date=None, catchup=False, now=now
    )
    assert second is not None and second.run_after == utc(2026, 1, 11)


def test_start_date_off_the_schedule_is_aligned_to_the_next_cron_time() -> None:
    runs = simulate(
        parse_schedule("0 6 * * *"),
        start_date=utc(2026, 1, 1, 7),
        catchup=True,
        begin=utc(2026, 1, 3, 12),
        until=utc(2026, 1, 3, 12),
    )
    assert [r.logical_date for r in runs] == [utc(2026, 1, 2, 6), utc(2026, 1, 3, 6)]


def test_end_date_is_inclusive_and_stops_the_schedule() -> None:
    def runs_until(end_date: datetime) -> list[DagRunInfo]:
        feb_1 = utc(2026, 2, 1)
        return simulate(
            parse_schedule("@daily"),
            start_date=JAN_1,
            end_date=end_date,
            catchup=True,
            begin=feb_1,
            until=feb_1,
        )

    at_midnight = runs_until(utc(2026, 1, 5))
    assert [r.logical_date for r in at_midnight] == days(date(2026, 1, 1), 5)
    at_noon = runs_until(utc(2026, 1, 5, 12))
    assert at_noon == at_midnight
    assert (
        parse_schedule("@daily").next_run(
            last_automated=at_noon[-1],
            start_date=JAN_1,
            end_date=utc(2026, 1, 5, 12),
            catchup=False,
            now=utc(2026, 2, 1),
        )
        is None
    )


def test_cron_without_start_date_follows_airflow_first_run_rule() -> None:
    timetable = parse_schedule("@daily")

    def first(now: datetime) -> datetime:
        info = timetable.next_run(
            last_automated=None, start_date=None, end_date=None, catchup=False, now=now
        )
        assert info is not None
        return info.logical_date

    assert first(utc(2026, 1, 10, 0, 3)) == utc(2026, 1, 10)  # within 10% of the gap
    assert first(utc(2026, 1, 10, 13)) == utc(2026, 1, 11)  # otherwise the next one


# --- time zones and DST ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first_day", "short_or_long_day", "expected"),
    [
        (datetime(2026, 3, 27, tzinfo=BERLIN), date(2026, 3, 29), 23),  # spring forward
        (datetime(2026, 10, 23, tzinfo=BERLIN), date(2026, 10, 25), 25),  # fall back
    ],
)
def test_hourly_in_berlin_across_dst(
    first_day: datetime, short_or_long_day: date, expected: int
) -> None:
    timetable = parse_schedule("0 * * * *", timezone="Europe/Berlin")
    until = first_day + timedelta(days=5)
    runs = simulate(
        timetable,
        start_date=first_day,
        catchup=True,
        begin=first_day - timedelta(hours=1),
        until=until,
        step=timedelta(minutes=20),
    )
    assert_utc_and_increasing(runs)
    assert len({r.logical_date for r in runs}) == len(runs)
    per_day = Counter(r.logical_date.astimezone(BERLIN).date() for r in runs)
    assert per_day[short_or_long_day] == expected
    for day, count in per_day.items():
        if day not in (short_or_long_day, until.date()):
            assert count == 24, day
    assert all(r.logical_date.astimezone(BERLIN).minute == 0 for r in runs)
    # Consecutive runs are exactly one hour apart in absolute time, DST or not.
    gaps = {b.logical_date - a.logical_date for a, b in itertools.pairwise(runs)}
    assert gaps == {timedelta(hours=1)}
    # The backfill path gives the same instants.
    backfill = list(timetable.iter_between(first_day, runs[-1].logical_date))
    assert [r.logical_date for r in backfill] == [r.logical_date for r in runs]


def test_fall_back_runs_both_copies_of_the_repeated_hour() -> None:
    timetable = parse_schedule("0 * * * *", timezone=BERLIN)
    runs = list(timetable.iter_between(utc(2026, 10, 24, 23), utc(2026, 10, 25, 2)))
    assert [r.logical_date.astimezone(BERLIN).isoformat() for r in runs] == [
        "2026-10-25T01:00:00+02:00",
        "2026-10-25T02:00:00+02:00",
        "2026-10-25T02:00:00+01:00",
        "2026-10-25T03:00:00+01:00",
    ]


def test_daily_0230_on_dst_days_runs_once_as_airflow_does() -> None:
    # Spring forward: 02:30 does not exist; it is moved forward by the gap to 03:30 CEST.
    # Fall back: 02:30 happens twice; the second occurrence (CET) is used.
    timetable = parse_schedule("30 2 * * *", timezone="Europe/Berlin")
    spring = list(timetable.iter_between(utc(2026, 3, 28), utc(2026, 3, 31)))
    assert [r.logical_date for r in spring] == [
        utc(2026, 3, 28, 1, 30),  # 02:30 CET
        utc(2026, 3, 29, 1, 30),  # 03:30 CEST
        utc(2026, 3, 30, 0, 30),  # 02:30 CEST
    ]
    autumn = list(timetable.iter_between(utc(2026, 10, 24), utc(2026, 10, 27)))
    assert [r.logical_date for r in autumn] == [
        utc(2026, 10, 24, 0, 30),  # 02:30 CEST
        utc(2026, 10, 25, 1, 30),  # 02:30 CET, the second 02:30
        utc(2026, 10, 26, 1, 30),  # 02:30 CET
    ]


def test_daily_cron_keeps_local_midnight_across_dst() -> None:
    runs = list(
        parse_schedule("@daily", timezone="Europe/Berlin").iter_between(
            utc(2026, 3, 27), utc(2026, 3, 31)
        )
    )
    assert [r.logical_date.astimezone(BERLIN).hour for r in runs] == [0, 0, 0, 0]
    assert [r.logical_date.utcoffset() for r in runs] == [timedelta(0)] * 4
    assert [r.logical_date.hour for r in runs] == [23, 23, 22, 22]


def test_hourly_on_one_weekday_keeps_its_wall_time_a_week_later() -> None:
    timetable = parse_schedule("0 * * * 1", timezone="Europe/Berlin")  # Mondays, every hour
    runs = list(timetable.iter_between(utc(2026, 3, 23, 22), utc(2026, 3, 30, 1)))
    local = [r.logical_date.astimezone(BERLIN) for r in runs]
    assert local[0].isoformat() == "2026-03-23T23:00:00+01:00"
    assert local[1].isoformat() == "2026-03-30T00:00:00+02:00"


def test_timezone_forms() -> None:
    kolkata = parse_schedule("0 9 * * *", timezone=ZoneInfo("Asia/Kolkata"))
    fixed = parse_schedule("0 9 * * *", timezone="+05:30")
    offset = parse_schedule("0 9 * * *", timezone=timezone(timedelta(hours=5, minutes=30)))
    for timetable in (kolkata, fixed, offset):
        info = timetable.next_run(
            last_automated=None, start_date=JAN_1, end_date=None, catchup=True, now=JAN_1
        )
        assert info is not None and info.logical_date == utc(2026, 1, 1, 3, 30)
    assert fixed.serialize()["timezone"] == "+05:30" == offset.serialize()["timezone"]
    assert parse_schedule("@daily", timezone=UTC).serialize()["timezone"] == "UTC"


# --- timedelta, @once, None ----------------------------------------------------------------


def test_timedelta_schedule_runs_on_the_start_date_grid() -> None:
    timetable = parse_schedule(timedelta(hours=6))
    start = utc(2026, 1, 1, 5)
    runs = simulate(
        timetable,
        start_date=start,
        catchup=True,
        begin=utc(2026, 1, 2, 12),
        until=utc(2026, 1, 2, 12),
    )
    assert [r.logical_date for r in runs] == [start + timedelta(hours=6 * k) for k in range(6)]
    assert timetable.summary == "every 6:00:00"

    # Without catchup: the latest grid point at or before now, then every 6 hours.
    runs = simulate(
        timetable,
        start_date=start,
        catchup=False,
        begin=utc(2026, 1, 3, 14),
        until=utc(2026, 1, 4, 0),
        step=timedelta(minutes=7),
    )
    assert [r.logical_date for r in runs] == [
        utc(2026, 1, 3, 11),
        utc(2026, 1, 3, 17),
        utc(2026, 1, 3, 23),
    ]


def test_timedelta_steps_are_absolute_across_dst() -> None:
    start = datetime(2026, 3, 28, tzinfo=BERLIN)
    runs = list(parse_schedule(timedelta(days=1)).iter_between(start, utc(2026, 3, 30)))
    assert [r.logical_date.astimezone(BERLIN).hour for r in runs] == [0, 0, 1]


def test_once_runs_once_at_start_date() -> None:
    timetable = parse_schedule("@once")
    start = utc(2026, 1, 3, 4, 5)
    for catchup in (True, False):
        info = timetable.next_run(
            last_automated=None,
            start_date=start,
            end_date=None,
            catchup=catchup,
            now=utc(2026, 2, 1),
        )
        assert info == DagRunInfo.exact(start)
        assert (
            timetable.next_run(
                last_automated=info,
                start_date=start,
                end_date=None,
                catchup=catchup,
                now=utc(2026, 3, 1),
            )
            is None
        )
    runs = simulate(timetable, start_date=start, catchup=False, begin=JAN_1, until=utc(2026, 1, 31))
    assert [r.logical_date for r in runs] == [start]


def test_once_without_start_date_runs_now_and_respects_end_date() -> None:
    timetable = parse_schedule("@once")
    now = utc(2026, 5, 5, 5)
    info = timetable.next_run(
        last_automated=None, start_date=None, end_date=None, catchup=False, now=now
    )
    assert info == DagRunInfo.exact(now)
    assert (
        timetable.next_run(
            last_automated=None, start_date=now, end_date=now - timedelta(1), catchup=False, now=now
        )
        is None
    )


def test_none_never_schedules() -> None:
    timetable = parse_schedule(None)
    assert isinstance(timetable, NullTimetable)
    assert not timetable.periodic and timetable.summary == "None"
    runs = simulate(timetable, start_date=JAN_1, catchup=True, begin=JAN_1, until=utc(2026, 1, 3))
    assert runs == []
    assert list(timetable.iter_between(JAN_1, utc(2026, 2, 1))) == []
    assert list(parse_schedule("@once").iter_between(JAN_1, utc(2026, 2, 1))) == []


# --- data interval timetables ------------------------------------------------------------


def test_cron_data_intervals_cover_the_previous_period() -> None:
    timetable = parse_schedule("@daily", data_intervals=True)
    assert isinstance(timetable, CronDataIntervalTimetable)
    runs = simulate(
        timetable,
        start_date=JAN_1,
        catchup=True,
        begin=utc(2026, 1, 4, 1),
        until=utc(2026, 1, 4, 1),
    )
    assert [(r.data_interval_start, r.data_interval_end) for r in runs] == [
        (utc(2026, 1, 1), utc(2026, 1, 2)),
        (utc(2026, 1, 2), utc(2026, 1, 3)),
        (utc(2026, 1, 3), utc(2026, 1, 4)),
    ]
    assert all(
        r.logical_date == r.data_interval_start and r.run_after == r.data_interval_end for r in runs
    )
    latest = timetable.next_run(
        last_automated=None,
        start_date=JAN_1,
        end_date=None,
        catchup=False,
        now=utc(2026, 1, 10, 13),
    )
    assert latest == DagRunInfo.interval(utc(2026, 1, 9), utc(2026, 1, 10))


def test_delta_data_intervals() -> None:
    timetable = parse_schedule(timedelta(hours=12), data_intervals=True)
    assert isinstance(timetable, DeltaDataIntervalTimetable)
    runs = list(timetable.iter_between(JAN_1, utc(2026, 1, 2)))
    assert [(r.data_interval_start, r.run_after) for r in runs] == [
        (utc(2026, 1, 1), utc(2026, 1, 1, 12)),
        (utc(2026, 1, 1, 12), utc(2026, 1, 2)),
        (utc(2026, 1, 2), utc(2026, 1, 2, 12)),
    ]
    latest = timetable.next_run(
        last_automated=None, start_date=JAN_1, end_date=None, catchup=False, now=utc(2026, 1, 5, 13)
    )
    assert latest == DagRunInfo.interval(utc(2026, 1, 5), utc(2026, 1, 5, 12))


def test_infer_manual_data_interval() -> None:
    at = utc(2026, 1, 25, 1, 0, 7)
    assert parse_schedule("@daily").infer_manual_data_interval(at) == (at, at)
    assert parse_schedule(None).infer_manual_data_interval(at) == (at, at)
    assert parse_schedule("@once").infer_manual_data_interval(at) == (at, at)
    assert parse_schedule(timedelta(hours=1)).infer_manual_data_interval(at) == (at, at)
    assert parse_schedule("@daily", data_intervals=True).infer_manual_data_interval(at) == (
        utc(2026, 1, 24),
        utc(2026, 1, 25),
    )
    assert parse_schedule(timedelta(hours=1), data_intervals=True).infer_manual_data_interval(
        at
    ) == (at - timedelta(hours=1), at)


# --- backfill ----------------------------------------------------------------------------


def test_iter_between_backfills_thirty_days() -> None:
    runs = list(parse_schedule("@daily").iter_between(JAN_1, utc(2026, 1, 30)))
    assert [r.logical_date for r in runs] == days(date(2026, 1, 1), 30)
    assert_utc_and_increasing(runs)
    # Bounds that are not on the schedule: the first cron time after start, none after end.
    inner = list(parse_schedule("@daily").iter_between(utc(2026, 1, 1, 6), utc(2026, 1, 30, 23)))
    assert [r.logical_date for r in inner] == days(date(2026, 1, 2), 29)
    intervals = list(
        parse_schedule("@daily", data_intervals=True).iter_between(JAN_1, utc(2026, 1, 30))
    )
    assert [r.logical_date for r in intervals] == days(date(2026, 1, 1), 30)
    assert intervals[-1].data_interval_end == utc(2026, 1, 31)


# --- summaries, run ids, serialization ---------------------------------------------------


@pytest.mark.parametrize(
    ("schedule", "summary", "periodic"),
    [
        ("0 0 * * *", "0 0 * * *", True),
        ("@daily", "@daily", True),
        (timedelta(hours=1), "every 1:00:00", True),
        (None, "None", False),
        ("@once", "@once", False),
    ],
)
def test_summary_and_periodic(
    schedule: str | timedelta | None, summary: str, periodic: bool
) -> None:
    timetable = parse_schedule(schedule)
    assert timetable.summary == summary
    assert timetable.periodic is periodic


@pytest.mark.parametrize(
    ("preset", "expression"),
    [
        ("@hourly", "0 * * * *"),
        ("@daily", "0 0 * * *"),
        ("@weekly", "0 0 * * 0"),
        ("@monthly", "0 0 1 * *"),
        ("@quarterly", "0 0 1 */3 *"),
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        ("@midnight", "0 0 * * *"),
        ("@DAILY", "0 0 * * *"),
    ],
)
def test_presets_expand_like_airflow(preset: str, expression: str) -> None:
    timetable = parse_schedule(preset)
    assert isinstance(timetable, CronTriggerTimetable)
    assert timetable.expression == expression


def test_run_id_formats() -> None:
    moment = utc(2026, 1, 1)
    assert run_id_for("scheduled", moment) == "scheduled__2026-01-01T00:00:00+00:00"
    assert run_id_for("manual", utc(2026, 1, 2, 3, 4, 5)) == "manual__2026-01-02T03:04:05+00:00"
    assert run_id_for("backfill", moment) == "backfill__2026-01-01T00:00:00+00:00"
    berlin_midnight = datetime(2026, 1, 1, tzinfo=BERLIN)
    assert run_id_for("scheduled", berlin_midnight) == "scheduled__2025-12-31T23:00:00+00:00"

    class RunType(StrEnum):
        SCHEDULED = "scheduled"

    assert run_id_for(RunType.SCHEDULED, moment) == "scheduled__2026-01-01T00:00:00+00:00"
    with pytest.raises(ValueError, match="unknown run type 'hourly'"):
        run_id_for("hourly", moment)
    with pytest.raises(DagDefinitionError, match="no time zone"):
        run_id_for("manual", datetime(2026, 1, 1))


@pytest.mark.parametrize(
    "timetable",
    [
        NullTimetable(),
        OnceTimetable(),
        CronTriggerTimetable("0 * * * *", timezone="Europe/Berlin"),
        CronTriggerTimetable("@weekly"),
        CronTriggerTimetable("30 2 * * 1-5", timezone="+05:30"),
        DeltaTriggerTimetable(timedelta(hours=1, microseconds=5)),
        CronDataIntervalTimetable("@daily", timezone="America/New_York"),
        DeltaDataIntervalTimetable(timedelta(days=2)),
    ],
    ids=lambda t: t.type_name,
)
def test_serialize_round_trip(timetable: Timetable) -> None:
    data = json.loads(json.dumps(timetable.serialize()))
    restored = deserialize_timetable(data)
    assert restored == timetable
    assert type(restored) is type(timetable)
    assert restored.summary == timetable.summary
    assert Timetable.deserialize(data) == timetable
    assert type(timetable).deserialize(data) == timetable
    assert hash(restored) == hash(timetable)
    start, end = utc(2026, 3, 20), utc(2026, 4, 5)
    assert list(restored.iter_between(start, end)) == list(timetable.iter_between(start, end))


def test_deserialize_rejects_unknown_or_mismatched_types() -> None:
    with pytest.raises(DagDefinitionError, match="unknown type 'hourly'"):
        deserialize_timetable({"type": "hourly"})
    with pytest.raises(DagDefinitionError, match="unknown type None"):
        deserialize_timetable({})
    with pytest.raises(DagDefinitionError, match="is not a OnceTimetable"):
        OnceTimetable.deserialize({"type": "null"})


def test_a_timetable_instance_passes_through() -> None:
    timetable = CronDataIntervalTimetable("@hourly")
    assert parse_schedule(timetable) is timetable


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ("61 * * * *", r"schedule '61 \* \* \* \*' is not a valid cron expression: "),
        ("* * *", r"schedule '\* \* \*' is not a valid cron expression: expected 5 fields"),
        ("0 0 * * * *", r"is not a valid cron expression: expected 5 fields .* got 6"),
        ("0 0 31 2 *", r"schedule '0 0 31 2 \*' is not a valid cron expression: it never fires"),
        ("not a cron", r"schedule 'not a cron' is not a valid cron expression"),
        ("@fortnightly", r"schedule '@fortnightly' is not a known preset"),
        ("@continuous", r"schedule '@continuous' is not supported"),
        (5, r"schedule 5 of type int is not supported"),
        (["@daily"], r"schedule \['@daily'\] of type list is not supported"),
        (timedelta(0), r"schedule datetime.timedelta\(0\) is not a valid interval"),
        (timedelta(hours=-1), r"must be positive"),
    ],
)
def test_invalid_schedules(schedule: object, message: str) -> None:
    with pytest.raises(DagDefinitionError, match=message):
        parse_schedule(schedule)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["Mars/Olympus_Mons", "", "../etc/passwd", "Europe"])
def test_unknown_time_zone(name: str) -> None:
    with pytest.raises(DagDefinitionError, match=f"unknown time zone {name!r}"):
        parse_schedule("@daily", timezone=name)


def test_unsupported_tzinfo_object() -> None:
    class Odd(tzinfo):
        pass

    with pytest.raises(DagDefinitionError, match=r"time zone .* is not supported"):
        parse_schedule("@daily", timezone=Odd())  # type: ignore[abstract]


def test_validate_schedule_args() -> None:
    daily = parse_schedule("@daily")
    validate_schedule_args(daily, JAN_1, None)
    validate_schedule_args(daily, JAN_1, JAN_1)
    validate_schedule_args(parse_schedule(None), None, None)
    validate_schedule_args(parse_schedule("@once"), None, None)
    with pytest.raises(DagDefinitionError, match="DAG needs a start_date for schedule '@daily'"):
        validate_schedule_args(daily, None, None)
    with pytest.raises(
        DagDefinitionError, match="DAG needs a start_date for schedule 'every 1:00:00'"
    ):
        validate_schedule_args(parse_schedule(timedelta(hours=1)), None, None)
    with pytest.raises(
        DagDefinitionError, match=r"end_date 2025-12-31T00:00:00\+00:00 is before start_date"
    ):
        validate_schedule_args(daily, JAN_1, utc(2025, 12, 31))
    with pytest.raises(DagDefinitionError, match="start_date 2026-01-01T00:00:00 has no time zone"):
        validate_schedule_args(daily, datetime(2026, 1, 1), None)
    with pytest.raises(DagDefinitionError, match=r"end_date .* has no time zone"):
        validate_schedule_args(daily, JAN_1, datetime(2026, 2, 1))
