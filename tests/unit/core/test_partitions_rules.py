"""Partition mappers, windows, wait policies and the run plan (pure rules)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from statewright.core.partitions import (
    AllowedKeyMapper,
    CronPartitionTimetable,
    DayWindow,
    FanOutMapper,
    FixedKeyMapper,
    IdentityMapper,
    MinimumCount,
    MonthWindow,
    PartitionConfig,
    PartitionEvent,
    PartitionKeyError,
    ProductMapper,
    RollupMapper,
    SegmentWindow,
    StartOfDayMapper,
    StartOfHourMapper,
    StartOfMonthMapper,
    StartOfWeekMapper,
    StartOfYearMapper,
    WeekWindow,
    Window,
    mapper_from_dict,
    plan_runs,
)
from statewright.core.timetables import deserialize_timetable, serialize_timetable


@pytest.mark.parametrize("mapper, key, expected", [
    (IdentityMapper(), "us", "us"),
    (StartOfHourMapper(), "2026-06-14T03:15:00", "2026-06-14T03"),
    (StartOfDayMapper(), "2026-06-14T03:15:00", "2026-06-14"),
    (StartOfWeekMapper(), "2026-06-14T03:15:00", "2026-06-08"),  # the Monday
    (StartOfMonthMapper(input_format="%Y-%m-%d"), "2026-06-14", "2026-06"),
    (StartOfYearMapper(), "2026-06-14T03:00:00", "2026"),
    (ProductMapper(IdentityMapper(), StartOfDayMapper()), "eu|2026-06-14T03:00:00",
     "eu|2026-06-14"),
    (AllowedKeyMapper(["us", "eu"]), "eu", "eu"),
    (FixedKeyMapper("all_regions"), "apac", "all_regions"),
])
def test_mappers_map_keys_as_airflow(mapper: object, key: str, expected: str) -> None:
    assert mapper.to_downstream(key) == expected  # type: ignore[attr-defined]
    again = mapper_from_dict(mapper.to_dict())  # type: ignore[attr-defined]
    assert again == mapper


@pytest.mark.parametrize("mapper, key, message", [
    (StartOfHourMapper(), "yesterday", "does not match the format '%Y-%m-%dT%H:%M:%S'"),
    (AllowedKeyMapper(["us"]), "mars", "not one of the allowed keys"),
    (ProductMapper(IdentityMapper(), StartOfDayMapper()), "us", "1 segment"),
])
def test_a_key_a_mapper_cannot_read_is_a_clear_error(mapper: object, key: str,
                                                     message: str) -> None:
    with pytest.raises(PartitionKeyError, match=message):
        mapper.to_downstream(key)  # type: ignore[attr-defined]


def test_windows_list_their_members() -> None:
    day = datetime(2026, 2, 1)
    assert len(DayWindow().to_upstream(day)) == 24
    assert len(MonthWindow().to_upstream(day)) == 28
    week = WeekWindow().to_upstream(day)
    assert week[0] == day and week[-1] == day + timedelta(days=6)
    back = WeekWindow(direction=Window.Direction.BACKWARD).to_upstream(day)
    assert back[-1] == day and back[0] == day - timedelta(days=6)


def test_fan_out_gives_one_key_per_day_of_the_week() -> None:
    mapper = FanOutMapper(upstream_mapper=StartOfWeekMapper(), window=WeekWindow(),
                          max_downstream_keys=7)
    assert mapper.to_downstream("2026-06-08T00:00:00") == [
        f"2026-06-{d:02d}" for d in range(8, 15)]
    segment = FanOutMapper(IdentityMapper(), SegmentWindow(["us", "eu"]), IdentityMapper())
    assert segment.to_downstream("us") == ["us", "eu"]
    with pytest.raises(Exception, match="needs a downstream_mapper"):
        FanOutMapper(IdentityMapper(), SegmentWindow(["us"]))


def ev(i: int, asset: str, key: str | None) -> PartitionEvent:
    return PartitionEvent(i, asset, key)


def test_a_consumer_of_three_assets_runs_per_hour_once_all_three_arrived() -> None:
    config = PartitionConfig(StartOfHourMapper(), {})
    events = [ev(1, "a", "2026-06-14T03:00:00"), ev(2, "b", "2026-06-14T03:15:00"),
              ev(3, "a", "2026-06-14T04:00:00"), ev(4, "c", "2026-06-14T03:30:00")]
    plan = plan_runs(config, events, lambda names: names >= {"a", "b", "c"})
    assert [(r.partition_key, r.event_ids) for r in plan.runs] == [("2026-06-14T03", (1, 2, 4))]
    assert plan.dropped == []


def test_mismatched_mappers_never_trigger() -> None:
    config = PartitionConfig(IdentityMapper(), {"x": StartOfYearMapper(),
                                                "y": StartOfHourMapper()})
    plan = plan_runs(config, [ev(1, "x", "2026-06-14T03:00:00"),
                              ev(2, "y", "2026-06-14T03:00:00")],
                     lambda names: names >= {"x", "y"})
    assert plan.runs == []


def test_rollups_wait_for_their_window() -> None:
    daily = PartitionConfig(RollupMapper(StartOfDayMapper(), DayWindow()), {})
    hours = [ev(h, "a", f"2026-06-14T{h:02d}:00:00") for h in range(24)]
    assert plan_runs(daily, hours[:23], bool).runs == []
    assert [r.partition_key for r in plan_runs(daily, hours, bool).runs] == ["2026-06-14"]
    regions = PartitionConfig(RollupMapper(FixedKeyMapper("all"), SegmentWindow(
        ["us", "eu", "apac"]), MinimumCount(2)), {})
    assert plan_runs(regions, [ev(1, "r", "us")], bool).runs == []
    assert [r.event_ids for r in plan_runs(regions, [ev(1, "r", "us"), ev(2, "r", "eu")],
                                           bool).runs] == [(1, 2)]


def test_bad_keys_and_too_wide_fan_outs_are_dropped_with_a_reason() -> None:
    config = PartitionConfig(FanOutMapper(StartOfWeekMapper(), WeekWindow(),
                                          max_downstream_keys=3), {"h": StartOfHourMapper()})
    plan = plan_runs(config, [ev(1, "w", "2026-06-08T00:00:00"), ev(2, "h", "nope"),
                              ev(3, "h", None)], bool)
    assert plan.runs == [] and sorted(plan.dropped) == [1, 2, 3]
    assert any("fan-out exceeded (7 keys, at most 3)" in e for e in plan.errors)
    assert any("'nope' does not match" in e for e in plan.errors)


def test_cron_partition_timetable_gives_keys_and_checks_them() -> None:
    tt = CronPartitionTimetable("0 * * * *", timezone="UTC")
    start = datetime(2026, 1, 1, tzinfo=UTC)
    info = tt.next_run(last_automated=None, start_date=start, end_date=None, catchup=True,
                       now=start)
    assert info is not None and info.partition_key == "2026-01-01T00:00:00"
    assert tt.check_key("2026-01-01T05:00:00") == datetime(2026, 1, 1, 5, tzinfo=UTC)
    with pytest.raises(PartitionKeyError, match="does not match this DAG's timetable"):
        tt.check_key("us")
    with pytest.raises(PartitionKeyError, match="not a time of the schedule"):
        tt.check_key("2026-01-01T05:30:00")
    assert deserialize_timetable(serialize_timetable(tt)) == tt
