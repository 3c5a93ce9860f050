"""Airflow 3.3's example_asset_partition.py and example_workday_timetable.py (the same file as
Airflow 3.1's, in core/; its timetable comes from Airflow's plugin file ``workday.py`` in the
plugins folder ``core33/plugins``), unedited through the compatibility layer: their DAGs run
as the files' docstrings say they do in Airflow (real scheduler, in-process tasks, manual clock).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.sdk import plugins
from statewright.sdk.loader import load_dag_file
from statewright.services.dag_runs import trigger_dag

CORE33 = Path(__file__).parents[2] / "fixtures" / "airflow_examples" / "core33"
PARTITIONS = CORE33 / "partitions_assets" / "example_asset_partition.py"
PLUGINS = CORE33 / "plugins"  # Airflow's example_dags/plugins, workday.py among them
WORKDAY_EXAMPLE = CORE33.parent / "core" / "example_workday_timetable.py"


def keys(h: Any, dag_id: str) -> list[str]:
    runs = h.runs(dag_id)
    assert all(r.state == "success" for r in runs), [(r.run_id, r.state) for r in runs]
    return sorted(r.partition_key for r in runs)


def trigger(h: Any, engine: Engine, dag_id: str, key: str | None = None) -> None:
    with transaction(engine) as conn:
        trigger_dag(conn, dag_id, now=h.clock(), actor=Actor.USER,
                    run_id=f"manual_{dag_id}_{key}", partition_key=key)


def test_example_asset_partition_runs_as_in_airflow(
        assets_harness: Callable, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    loaded = load_dag_file(PARTITIONS)
    assert loaded.error is None, loaded.error
    h = assets_harness(datetime(2026, 6, 15, 0, 0, 30, tzinfo=UTC))  # a Monday
    h.sync(*loaded.dags.values(), fileloc=str(PARTITIONS))
    h.loop()
    # Team A (minute 0) and the weekly model ran; the weekly key fans out to 7 days each way.
    assert keys(h, "ingest_team_a_player_stats") == ["2026-06-15T00:00:00"]
    assert keys(h, "train_weekly_model") == ["2026-06-15T00:00:00"]
    assert keys(h, "daily_inference") == [f"2026-06-{d}" for d in range(15, 22)]
    assert keys(h, "trailing_week_inference") == [f"2026-06-{d:02d}" for d in range(9, 16)]
    assert h.runs("clean_and_combine_player_stats") == []  # B and C not there yet
    h.clock.advance(timedelta(minutes=30))
    h.loop()
    assert keys(h, "team_b_player_stats") == ["2026-06-15T00:15:00"]
    assert keys(h, "team_c_player_stats") == ["2026-06-15T00:30:00"]
    assert keys(h, "clean_and_combine_player_stats") == ["2026-06-15T00"]
    assert keys(h, "compute_player_odds") == ["2026-06-15T00"]
    assert h.runs("player_odds_quality_check_wont_ever_to_trigger") == []
    # Runtime partitions.
    trigger(h, engine, "ingest_regional_sales")
    trigger(h, engine, "ingest_region_stats", "us")
    trigger(h, engine, "ingest_region_stats", "mars")  # not an allowed key downstream
    trigger(h, engine, "live_region_player_stats")
    trigger(h, engine, "multi_region_player_stats")
    h.loop()
    assert keys(h, "aggregate_regional_sales") == [
        "apac|2026-06-14", "eu|2026-06-14", "us|2026-06-14"]
    assert keys(h, "regional_stats_breakdown") == ["us"]
    assert keys(h, "summarize_live_region_stats") == ["us"]
    assert keys(h, "scatter_live_region_to_segments") == ["apac", "eu", "us"]
    assert keys(h, "segment_region_stats_rollup") == ["all_regions"]
    assert keys(h, "segment_region_stats_early_rollup") == ["all_regions"]
    # The daily rollup waits for all 24 hours of Team A, then feeds the monthly one (waiting).
    for _ in range(23):
        h.clock.advance(timedelta(hours=1))
        h.loop()
    assert len(h.runs("ingest_team_a_player_stats")) == 24
    assert keys(h, "daily_team_a_rollup") == ["2026-06-15"]
    assert h.runs("monthly_team_a_rollup") == []
    # B and C are hourly too: one combined run per hour once all three arrived.
    assert keys(h, "clean_and_combine_player_stats") == [f"2026-06-15T{x:02d}" for x in range(24)]
    assert h.runs("player_odds_quality_check_wont_ever_to_trigger") == []


def _load_workday(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The example, unedited: ``airflow.example_dags.plugins.workday`` is the plugins folder's
    ``workday.py`` (Airflow's file, unedited too)."""
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    monkeypatch.setenv("STATEWRIGHT_PLUGINS_FOLDER", str(PLUGINS))
    plugins.reset_plugins()
    try:
        loaded = load_dag_file(WORKDAY_EXAMPLE)
    finally:
        plugins.reset_plugins()
    assert loaded.error is None, loaded.error
    return loaded.dags["example_workday_timetable"]


def test_example_workday_timetable_runs_after_each_workday(
        assets_harness: Callable, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dag = _load_workday(monkeypatch)
    # catchup is off: the first run is today's; Date.today() is the real date.
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    h = assets_harness(today + timedelta(minutes=1))
    h.sync(dag, fileloc=str(tmp_path / "example_workday_timetable.py"))
    for _ in range(9):
        h.clock.advance(timedelta(days=1))
        h.loop()
    runs = h.runs("example_workday_timetable")
    starts = [r.data_interval_start for r in runs]
    expected = [today + timedelta(days=d) for d in range(9)
                if (today + timedelta(days=d)).weekday() < 5]
    assert starts == expected
    assert all(r.data_interval_end - r.data_interval_start == timedelta(days=1) for r in runs)
    assert all(r.state == "success" for r in runs)
    assert {t.state for t in h.tis("example_workday_timetable")} == {"success"}
