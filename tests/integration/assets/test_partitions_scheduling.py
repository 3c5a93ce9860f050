"""Partitioned assets end to end: runs carry partition keys, events carry them, consumers run
once per downstream partition (or window) when it is ready; bad keys are refused."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.core.partitions import PartitionKeyError
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.sdk import (
    DAG,
    Asset,
    CronPartitionTimetable,
    DayWindow,
    FanOutMapper,
    FixedKeyMapper,
    IdentityMapper,
    MinimumCount,
    PartitionedAssetTimetable,
    PartitionedAtRuntime,
    RollupMapper,
    SegmentWindow,
    StartOfDayMapper,
    StartOfHourMapper,
    StartOfYearMapper,
    get_current_context,
    task,
)
from statewright.services.dag_runs import trigger_dag

HOURLY = Asset(name="hourly", uri="file://in/hourly.csv")
OTHER = Asset(name="other", uri="file://in/other.csv")
REGIONS = Asset(name="regions", uri="file://in/regions.csv")


def consumer(dag_id: str, schedule: Any, seen: list[Any]) -> DAG:
    with DAG(dag_id, schedule=schedule) as dag:
        @task
        def read(dag_run: Any = None) -> None:
            seen.append((dag_run.partition_key, get_current_context()["partition_key"]))
        read()
    return dag


def hourly_producer(dag_id: str, asset: Asset) -> DAG:
    with DAG(dag_id, schedule=CronPartitionTimetable("0 * * * *", timezone="UTC"),
             start_date=datetime(2026, 1, 1, tzinfo=UTC), catchup=True,
             max_active_runs=100) as dag:
        @task(outlets=[asset])
        def write() -> None:
            pass
        write()
    return dag


def test_hourly_partitions_feed_an_aligned_consumer_and_a_daily_rollup(
        assets_harness: Callable) -> None:
    h = assets_harness(datetime(2026, 1, 2, 0, 30, tzinfo=UTC))
    hourly_seen: list[Any] = []
    daily_seen: list[Any] = []
    never_seen: list[Any] = []
    h.sync(hourly_producer("ingest", HOURLY), hourly_producer("ingest_other", OTHER),
           consumer("combine", PartitionedAssetTimetable(
               assets=HOURLY & OTHER, default_partition_mapper=StartOfHourMapper()),
               hourly_seen),
           consumer("daily", PartitionedAssetTimetable(
               assets=HOURLY, default_partition_mapper=RollupMapper(
                   StartOfDayMapper(), DayWindow())), daily_seen),
           consumer("mismatch", PartitionedAssetTimetable(
               assets=HOURLY & OTHER, partition_mapper_config={
                   HOURLY: StartOfYearMapper(), OTHER: StartOfHourMapper()}), never_seen))
    h.loop()
    produced = h.runs("ingest")
    assert len(produced) == 25  # 2026-01-01T00 ... 2026-01-02T00
    assert produced[0].partition_key == "2026-01-01T00:00:00"
    assert produced[0].partition_date == datetime(2026, 1, 1, tzinfo=UTC)
    assert {e["partition_key"] for e in h.events(HOURLY.name)} == {
        r.partition_key for r in produced}
    combined = h.runs("combine")
    assert sorted(r.partition_key for r in combined) == sorted(
        f"{r.partition_key[:13]}" for r in produced)
    assert all(r.state == "success" and r.run_type == "asset_triggered" for r in combined)
    assert sorted(hourly_seen)[0] == ("2026-01-01T00", "2026-01-01T00")
    (daily,) = h.runs("daily")  # the second day has one hour of 24: it waits
    assert daily.partition_key == "2026-01-01" and daily_seen == [("2026-01-01",) * 2]
    assert len(h.triggering(daily.id)) == 24
    assert h.runs("mismatch") == [] and never_seen == []


def runtime_producer() -> DAG:
    with DAG("regions_producer", schedule=PartitionedAtRuntime()) as dag:
        @task(outlets=[REGIONS])
        def write(outlet_events: Any = None) -> None:
            outlet_events[REGIONS].add_partitions(["us", "eu", "us", "apac"])
        write()
    return dag


def test_runtime_partitions_roll_up_and_fan_out(assets_harness: Callable) -> None:
    h = assets_harness()
    rollup: list[Any] = []
    early: list[Any] = []
    fanned: list[Any] = []
    h.sync(runtime_producer(),
           consumer("all_regions", PartitionedAssetTimetable(
               assets=REGIONS, default_partition_mapper=RollupMapper(
                   FixedKeyMapper("all"), SegmentWindow(["us", "eu", "apac"]))), rollup),
           consumer("two_regions", PartitionedAssetTimetable(
               assets=REGIONS, default_partition_mapper=RollupMapper(
                   FixedKeyMapper("all"), SegmentWindow(["us", "eu", "apac"]),
                   MinimumCount(2))), early),
           consumer("per_region", PartitionedAssetTimetable(
               assets=REGIONS, default_partition_mapper=FanOutMapper(
                   IdentityMapper(), SegmentWindow(["us", "eu"]), IdentityMapper())), fanned))
    h.trigger("regions_producer")
    h.loop()
    assert sorted(e["partition_key"] for e in h.events(REGIONS.name)) == ["apac", "eu", "us"]
    assert [r.partition_key for r in h.runs("all_regions")] == ["all"]
    assert [r.partition_key for r in h.runs("two_regions")] == ["all"]
    # Each of the three events fans out to us and eu: one run per downstream key.
    assert sorted(r.partition_key for r in h.runs("per_region")) == ["eu", "us"]
    assert all(r.state == "success" for r in h.runs("per_region"))


def test_a_triggered_run_takes_a_partition_key_that_matches_the_timetable(
        assets_harness: Callable, engine: Engine) -> None:
    h = assets_harness()
    seen: list[Any] = []
    h.sync(hourly_producer("ingest", HOURLY), runtime_producer(),
           consumer("aligned", PartitionedAssetTimetable(assets=HOURLY), seen))
    with transaction(engine) as conn:
        trigger_dag(conn, "ingest", now=h.clock(), actor=Actor.USER, run_id="by_hand",
                    partition_key="2026-01-01T05:00:00")
        trigger_dag(conn, "regions_producer", now=h.clock(), actor=Actor.USER,
                    run_id="free_form", partition_key="us")
    for bad, message in [("us", "does not match this DAG's timetable"),
                         ("2026-01-01T05:30:00", "not a time of the schedule")]:
        with pytest.raises(PartitionKeyError, match=message), transaction(engine) as conn:
            trigger_dag(conn, "ingest", now=h.clock(), actor=Actor.USER, run_id="bad",
                        partition_key=bad)
    assert {r.run_id: r.partition_key for r in h.runs("ingest")} == {
        "by_hand": "2026-01-01T05:00:00"}
    assert [r.partition_key for r in h.runs("regions_producer")] == ["us"]


def test_a_backfill_by_partition_range_gives_each_run_its_key(
        assets_harness: Callable, engine: Engine) -> None:
    from statewright.services.backfill import create_backfill, partition_range

    h = assets_harness(datetime(2026, 1, 1, 0, 30, tzinfo=UTC))
    seen: list[Any] = []
    with DAG("parts", schedule=CronPartitionTimetable("0 * * * *", timezone="UTC"),
             start_date=datetime(2025, 12, 1, tzinfo=UTC)) as dag:
        @task(outlets=[HOURLY])
        def write(dag_run: Any = None) -> None:
            seen.append(dag_run.partition_key)
        write()
    h.sync(dag, consumer("aligned", PartitionedAssetTimetable(assets=HOURLY), []))
    with engine.connect() as conn:
        start, end = partition_range(conn, "parts", "2025-12-02T03:00:00", "2025-12-02T05:00:00")
    create_backfill(engine, "parts", start, end, now=h.clock())
    h.loop()
    backfilled = h.runs("parts", "backfill")
    assert [r.partition_key for r in backfilled] == [
        "2025-12-02T03:00:00", "2025-12-02T04:00:00", "2025-12-02T05:00:00"]
    assert set(seen) >= {r.partition_key for r in backfilled}
    assert sorted(r.partition_key for r in h.runs("aligned")) >= sorted(
        r.partition_key for r in backfilled)
