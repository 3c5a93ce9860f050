"""Apache Airflow's asset example DAGs (tests/fixtures/airflow_examples/core, only their imports
changed by tests/airflow_examples.py) behave as their docstrings say they do in Airflow."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from tests.airflow_examples import airflow_example

from statewright.crypto import generate_key, load_fernet
from statewright.db.tables_assets import asset_watcher
from statewright.sdk.loader import load_dag_file
from statewright.services.triggerer import TriggererConfig, TriggererJob
from statewright.services.worker.deferral import install_cipher


def load(h: Any, name: str) -> dict[str, Any]:
    path = airflow_example(f"core/{name}.py")
    result = load_dag_file(path)
    assert not result.error, result.error
    for dag in result.dags.values():
        for t in dag.tasks:
            if hasattr(t, "bash_command"):
                t.bash_command = "true"  # the examples sleep 5 s; the schedule is what matters
    h.sync(*result.dags.values(), fileloc=str(path))
    return dict(result.dags)


def counts(h: Any, dag_ids: list[str]) -> dict[str, int]:
    return {d: len(h.runs(d, "asset_triggered")) for d in dag_ids}


CONSUMERS = ["asset_consumes_1", "asset_consumes_1_and_2", "asset_consumes_1_never_scheduled",
             "asset_consumes_unknown_never_scheduled", "consume_1_and_2_with_asset_expressions",
             "consume_1_or_2_with_asset_expressions",
             "consume_1_or_both_2_and_3_with_asset_expressions",
             "conditional_asset_and_time_based_timetable"]


def test_example_assets(assets_harness: Callable) -> None:
    from datetime import UTC, datetime

    h = assets_harness(datetime(2026, 1, 5, 12, tzinfo=UTC))  # a Monday
    load(h, "example_assets")
    h.loop()  # asset_produces_1 is @daily: its scheduled run produces dag1's asset
    assert [r.run_type for r in h.runs("asset_produces_1")] == ["scheduled"]
    assert counts(h, CONSUMERS) == {
        "asset_consumes_1": 1, "asset_consumes_1_and_2": 0,
        "asset_consumes_1_never_scheduled": 0, "asset_consumes_unknown_never_scheduled": 0,
        "consume_1_and_2_with_asset_expressions": 0, "consume_1_or_2_with_asset_expressions": 1,
        "consume_1_or_both_2_and_3_with_asset_expressions": 1,
        "conditional_asset_and_time_based_timetable": 0}
    h.trigger("asset_produces_2")  # manual: schedule=None
    h.loop()
    assert counts(h, CONSUMERS) == {
        "asset_consumes_1": 1, "asset_consumes_1_and_2": 1,
        "asset_consumes_1_never_scheduled": 0, "asset_consumes_unknown_never_scheduled": 0,
        "consume_1_and_2_with_asset_expressions": 1, "consume_1_or_2_with_asset_expressions": 2,
        "consume_1_or_both_2_and_3_with_asset_expressions": 1,
        "conditional_asset_and_time_based_timetable": 1}
    assert all(r.state == "success" for d in CONSUMERS for r in h.runs(d, "asset_triggered"))
    timed = len(h.runs("conditional_asset_and_time_based_timetable", "scheduled"))
    h.clock.advance(2 * 86400)  # past Wednesday 01:00: the time part of the asset-or-time DAG
    h.loop()
    assert len(h.runs("conditional_asset_and_time_based_timetable", "scheduled")) == timed + 1
    assert len(h.runs("conditional_asset_and_time_based_timetable", "asset_triggered")) == 1


def test_example_asset_alias(assets_harness: Callable) -> None:
    h = assets_harness()
    load(h, "example_asset_alias")
    h.trigger("asset_alias_example_alias_producer")
    h.loop()
    consumers = ["asset_s3_bucket_consumer", "asset_alias_example_alias_consumer"]
    assert counts(h, consumers) == {"asset_s3_bucket_consumer": 1,
                                    "asset_alias_example_alias_consumer": 1}
    (event,) = h.events("s3://bucket/my-task")
    assert event["source_aliases"] == ["example-alias"]
    h.trigger("asset_s3_bucket_producer")
    h.loop()
    assert counts(h, consumers) == {"asset_s3_bucket_consumer": 2,
                                    "asset_alias_example_alias_consumer": 2}
    assert all(r.state == "success" for d in consumers for r in h.runs(d))


def test_example_asset_alias_with_no_taskflow(assets_harness: Callable) -> None:
    h = assets_harness()
    load(h, "example_asset_alias_with_no_taskflow")
    h.trigger("asset_s3_bucket_producer_with_no_taskflow")
    h.loop()
    assert len(h.runs("asset_s3_bucket_consumer_with_no_taskflow")) == 1
    assert h.runs("asset_alias_example_alias_consumer_with_no_taskflow") == []
    h.trigger("asset_alias_example_alias_producer_with_no_taskflow")
    h.loop()
    (run,) = h.runs("asset_alias_example_alias_consumer_with_no_taskflow")
    assert run.state == "success"
    assert [e["asset"]["uri"] for e in h.triggering(run.id)] == ["s3://bucket/my-task"]


def test_example_asset_with_watchers(assets_harness: Callable, engine: Engine) -> None:
    """Airflow 3.3.2's file: a FileDeleteTrigger and two DirectoryFileDeleteTriggers on one
    directory, each firing for its own file name only."""
    cipher = load_fernet(generate_key())
    install_cipher(cipher)
    flags = Path("/tmp/region-flags")
    files = [Path("/tmp/test"), flags / "us.flag", flags / "eu.flag"]
    try:
        h = assets_harness()
        load(h, "example_asset_with_watchers")
        with engine.connect() as conn:
            rows = {r.name: r.classpath for r in conn.execute(select(asset_watcher)).all()}
        assert sorted(rows) == ["eu_flag_watcher", "test_asset_watcher", "us_flag_watcher"]
        assert rows["test_asset_watcher"].endswith(".FileDeleteTrigger")
        assert rows["us_flag_watcher"].endswith(".DirectoryFileDeleteTrigger")
        job = TriggererJob(engine, cipher=cipher, config=TriggererConfig(poll_seconds=0.05))
        job.start()
        try:
            flags.mkdir(exist_ok=True)
            (flags / "other.flag").write_text("")  # no watcher's name: left alone
            for f in files:
                f.write_text("")
            assets = ["example_asset", "region_us_flag", "region_eu_flag"]
            deadline = time.monotonic() + 30
            while not all(h.events(a) for a in assets) and time.monotonic() < deadline:
                job.run_once()
                time.sleep(0.05)
        finally:
            job.stop()
        assert [len(h.events(a)) for a in assets] == [1, 1, 1]
        assert not any(f.exists() for f in files)  # each trigger deleted its own file
        assert (flags / "other.flag").exists()
        h.loop()
        assert [r.state for r in h.runs("example_asset_with_watchers")] == ["success"]
    finally:
        install_cipher(None)
        for f in [*files, flags / "other.flag"]:
            f.unlink(missing_ok=True)


def test_example_asset_decorator(assets_harness: Callable, capsys: pytest.CaptureFixture) -> None:
    h = assets_harness()
    dags = load(h, "example_asset_decorator")
    assert set(dags) == {"asset1_producer", "asset2_producer", "consumes_asset_decorator"}
    task = dags["asset2_producer"].get_task("asset2_producer")
    assert [o.uri for o in task.outlets] == ["s3://bucket/object"]
    h.trigger("asset1_producer")
    h.loop()
    assert [r.state for r in h.runs("consumes_asset_decorator")] == ["success"]
    h.clock.advance(5)
    h.trigger("asset2_producer")
    h.loop()
    (run,) = h.runs("asset2_producer")
    assert run.state == "success"
    printed = capsys.readouterr().out
    assert "Asset(name='asset2_producer', uri='s3://bucket/object')" in printed
    assert "s3://bucket/asset1_producer" in printed  # the inlet's events, read by the task
    assert [r.state for r in h.runs("consumes_asset_decorator")] == ["success", "success"]
