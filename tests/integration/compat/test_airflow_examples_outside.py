"""Airflow example files whose recorded Airflow outcome cannot be compared (``OUTSIDE`` in
``test_airflow_examples_unedited.py``), run unedited through the compatibility layer with what
makes each one deterministic here: injected sensor clocks, shortened sensor timeouts, or the
other DAG it waits for in the same database. SQLite and PostgreSQL."""

from __future__ import annotations

import fcntl
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from statewright.db.tables_assets import asset_event
from statewright.sdk.loader import load_dag_file
from statewright.sdk.sensors import base as sensor_base

EXAMPLES = Path(__file__).parents[2] / "fixtures" / "airflow_examples"
LOGICAL_DATE = datetime(2025, 1, 6, tzinfo=UTC)


@pytest.fixture(autouse=True)
def airflow_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")


def _load(name: str) -> dict[str, Any]:
    loaded = load_dag_file(EXAMPLES / name)
    assert loaded.error is None, loaded.error
    return dict(loaded.dags)


class SensorClock:
    """The sensors' clock: starts at a given moment, moves only when a sensor sleeps."""

    def __init__(self, start: datetime) -> None:
        self.now = start
        self.slept = 0.0

    def __call__(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept += seconds
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def no_wait_sleep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``sleep`` command that returns at once (the file's ``sleep 3; touch ...``)."""
    shim = tmp_path / "bin" / "sleep"
    shim.parent.mkdir()
    shim.write_text("#!/bin/sh\nexit 0\n")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")


def test_example_sensors_runs_every_sensor_to_its_end(
        engine: Engine, monkeypatch: pytest.MonkeyPatch, no_wait_sleep: None) -> None:
    """Airflow's own run does not end within 180 s: its poke-mode sensors time out one 60 s
    poke at a time, and its deferred ``TimeSensor`` with ``timeout=1`` waits an hour, as Airflow
    gives that deferral no timeout. Here the sensor's timeout bounds the deferral too, so that
    sensor is skipped (``soft_fail``) after a second, and every poke-mode wait runs on the
    injected clock."""
    dags = _load("standard/example_sensors.py")
    loaded_at = datetime.now(UTC)  # the file's target times are taken from the wall clock
    clock = SensorClock(loaded_at)
    monkeypatch.setattr(sensor_base, "_now", clock)
    monkeypatch.setattr(sensor_base, "_sleep", clock.sleep)
    # An hour on may be tomorrow: TimeSensor then waits for that time of today, long past.
    in_an_hour = "success" if (loaded_at + timedelta(hours=1)).date() != loaded_at.date() \
        else "skipped"
    # The file creates, waits for and removes one fixed path: the SQLite and PostgreSQL runs of
    # this test (two test processes at once) take turns with it.
    with open("/tmp/temporary_file_for_testing.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            run = dags["example_sensors"].test(logical_date=LOGICAL_DATE, engine=engine)
        finally:
            Path("/tmp/temporary_file_for_testing").unlink(missing_ok=True)
    assert run.states == {
        "wait_some_seconds": "success", "wait_some_seconds_async": "success",
        "fire_immediately": "success", "fire_immediately_async": "success",
        "timeout_after_second_date_in_the_future": in_an_hour,
        "timeout_after_second_date_in_the_future_async": in_an_hour,
        "Sensor_succeeds": "success", "Sensor_fails_after_3_seconds": "skipped",
        "remove_file": "success", "create_file_after_3_seconds": "success",
        "wait_for_file": "success", "wait_for_file_async": "success",
        "success_sensor_python": "success", "failure_timeout_sensor_python": "skipped",
        "week_day_sensor_failing_on_timeout":
            "success" if loaded_at.weekday() == 0 else "skipped",
        "print_date_in_bash": "success",
    }
    assert run.state.value == "success"
    # The two that always time out (a BashSensor, a PythonSensor) slept a poke_interval each.
    assert clock.slept >= 120


def test_example_external_task_marker_dag_waits_for_a_task_group_it_never_finds(
        engine: Engine) -> None:
    """Airflow's own run never ends within its 180 s: the child's sensors wait up to 600 s.
    With the parent's run first and the sensors' timeouts shortened, ``child_task1`` finds the
    marker's success; ``child_task2`` waits for ``parent_dag_task_group_id``, a task group the
    parent DAG does not have, so it times out (Airflow's rule: a group with no task instance in
    the run is never done)."""
    dags = _load("standard/example_external_task_marker_dag.py")
    parent = dags["example_external_task_marker_parent"]
    child = dags["example_external_task_marker_child"]
    assert child.get_task("child_task2").external_task_group_id == "parent_dag_task_group_id"
    for sensor in ("child_task1", "child_task2"):
        child.get_task(sensor).timeout = 0.5
        child.get_task(sensor).poke_interval = 0.05
    first = parent.test(logical_date=LOGICAL_DATE, engine=engine)
    assert first.states == {"parent_task": "success"}
    run = child.test(logical_date=LOGICAL_DATE, engine=engine)
    assert run.states == {"child_task1": "success", "child_task2": "failed",
                          "child_task3": "upstream_failed"}
    assert "SensorTimeout" in (run.ti("child_task2").state_message or "")


def test_example_external_task_parent_deferrable_senses_its_child_files_run(
        engine: Engine) -> None:
    """Airflow recorded this file after ``example_external_task_child_deferrable.py`` in one
    database: its deferred sensor found that file's ``child_dag`` run at the same logical date
    (and its ``TriggerDagRunOperator`` failed re-creating that run on Airflow's unique key).
    Alone, the sensor waits for a ``child_dag`` run that never comes. After the child file in
    the same database, the sensor finds ``child_task``'s success through the triggerer."""
    child = _load("standard/example_external_task_child_deferrable.py")["child_dag"]
    assert child.test(logical_date=LOGICAL_DATE, engine=engine).states == {
        "child_task": "success"}
    parent = _load("standard/example_external_task_parent_deferrable.py")
    run = parent["example_external_task"].test(logical_date=LOGICAL_DATE, engine=engine)
    assert run.ti("start").state.value == "success"
    assert run.ti("parent_task_sensor").state.value == "success"
    # As in Airflow's recording: the trigger meets the child's run at that date under another
    # run id, which reset_dag_run (same run id only) does not clear.
    trigger = run.ti("trigger_child_task")
    assert trigger.state.value == "failed"
    assert "already has a run" in (trigger.state_message or "")
    history = [h["to_state"] for h in run.history if h.get("task_id") == "parent_task_sensor"]
    assert "deferred" in history  # waited in the triggerer (deferrable=True)


def test_example_outlet_event_extra_attaches_the_extra_each_way(engine: Engine) -> None:
    """Airflow's recorded runs all failed only because its recording database already held
    ``s3://output/1.txt`` under another name (from ``example_inlet_event_extra.py``), which made
    ``test-asset`` inactive; alone, Airflow's three runs succeed. Here too, and each run's event
    carries ``{"hi": "bye"}``: yielded as ``Metadata``, set on ``outlet_events`` and set in a
    ``post_execute`` hook."""
    dags = _load("core/example_outlet_event_extra.py")
    assert sorted(dags) == ["asset_with_extra_by_context", "asset_with_extra_by_yield",
                            "asset_with_extra_from_classic_operator"]
    for dag_id, dag in sorted(dags.items()):
        run = dag.test(logical_date=LOGICAL_DATE, engine=engine)
        assert run.state.value == "success" and run.states == {dag_id: "success"}, dag_id
        if dag_id != "asset_with_extra_from_classic_operator":  # (a BashOperator's last line)
            assert run.ti(dag_id).return_value is None
    with engine.connect() as conn:
        rows = conn.execute(select(asset_event.c.source_dag_id, asset_event.c.extra)).all()
    extras = {dag_id: json.loads(e) if isinstance(e, str) else e for dag_id, e in rows}
    assert extras == {dag_id: {"hi": "bye"} for dag_id in dags}
