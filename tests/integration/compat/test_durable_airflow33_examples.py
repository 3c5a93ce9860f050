"""Airflow 3.3's example files for task state, asset state, display names, custom priority
weights and listener plugins, unedited, through the compatibility layer (SQLite and
PostgreSQL). ``core33/plugins`` is the plugins folder (Airflow's ``example_dags/plugins``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from statewright.core.clock import utcnow
from statewright.db.tables import task_instance
from statewright.sdk import plugins
from statewright.sdk.loader import load_dag_file

EXAMPLES = Path(__file__).parents[2] / "fixtures" / "airflow_examples"
PLUGINS = EXAMPLES / "core33" / "plugins"
# After the state store examples' start_date (2026-01-01): a run before a task's start date has
# no task instance of it, in Airflow (expected.json records their runs at 2025-01-06 empty).
LOGICAL_DATE = datetime.fromisoformat("2026-01-06T00:00:00+00:00")

# Airflow's outcome: the run's state, each task instance's state and try number.
EXPECTED = {
    "core33/example_task_state_store.py": {
        "example_task_state_store": ("success", {"run_job": ("success", 2)})},
    "core33/example_task_state_store_async.py": {
        "example_task_state_store_async": ("success", {"ingest_pages": ("success", 2)})},
    "core33/example_task_state_store_mapped.py": {
        "example_task_state_store_mapped": ("success", {
            "get_tables": ("success", 1), "process_table[0]": ("success", 1),
            "process_table[1]": ("success", 1), "process_table[2]": ("success", 1)})},
    "core33/example_asset_state_store.py": {
        "example_asset_state_store_producer": ("success", {"load": ("success", 1)}),
        "example_asset_state_store_consumer": ("success", {"consume": ("success", 1)})},
    "core/example_display_name.py": {
        "example_display_name": ("success", {"sample_task_1": ("success", 1),
                                             "sample_task_2": ("success", 1)})},
    "core/example_custom_weight.py": {
        "example_custom_weight": ("success", {
            "start": ("success", 1), "task_1": ("success", 1), "task_2": ("success", 1),
            "task_non_custom": ("success", 1)})},
}


class _FastClock:
    """Real time plus whatever the run slept (retry delays pass at once)."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def now(self) -> datetime:
        return utcnow() + self.offset

    def sleep(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)


@pytest.fixture
def compat(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    monkeypatch.setenv("STATEWRIGHT_PLUGINS_FOLDER", str(PLUGINS))
    plugins.reset_plugins()
    yield
    plugins.reset_plugins()


def _run(engine: Engine, dag: object) -> dict[str, tuple[str, int]]:
    clock = _FastClock()
    run = dag.test(logical_date=LOGICAL_DATE, engine=engine,  # type: ignore[attr-defined]
                   clock=clock.now, sleep=clock.sleep)
    return run.state.value, {k: (v.state.value, v.try_number)
                             for k, v in sorted(run.task_instances.items())}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_an_airflow33_example_ends_as_in_airflow(name: str, engine: Engine,
                                                 compat: None) -> None:
    loaded = load_dag_file(EXAMPLES / name)
    assert loaded.error is None, loaded.error
    expected = EXPECTED[name]
    assert sorted(loaded.dags) == sorted(expected)
    for dag_id in expected:  # producers before consumers (sorted ids do not promise it)
        assert _run(engine, loaded.dags[dag_id]) == expected[dag_id], dag_id


def test_the_custom_weight_strategy_sets_the_priority(engine: Engine, compat: None) -> None:
    dag = load_dag_file(EXAMPLES / "core/example_custom_weight.py").dags["example_custom_weight"]
    _run(engine, dag)
    c = task_instance.c
    with engine.connect() as conn:
        weights = dict(conn.execute(select(c.task_id, c.priority_weight).where(
            c.dag_id == "example_custom_weight")).all())
    # DecreasingPriorityStrategy: max(3 - try_number + 1, 1) at creation (try 0) = 4
    assert weights["task_1"] == weights["task_2"] == 4
    assert weights["task_non_custom"] == 2


def test_the_display_names_are_kept(compat: None) -> None:
    dag = load_dag_file(EXAMPLES / "core/example_display_name.py").dags["example_display_name"]
    assert dag.dag_display_name == "Sample DAG with Display Name"
    assert [dag.task_dict[t].task_display_name for t in ("sample_task_1", "sample_task_2")] == [
        "Sample Task 1", "Sample Task 2"]


def test_the_listener_plugin_hears_task_and_run_changes(
        engine: Engine, compat: None, capsys: pytest.CaptureFixture[str]) -> None:
    dag = load_dag_file(EXAMPLES / "core/example_display_name.py").dags["example_display_name"]
    assert _run(engine, dag)[0] == "success"
    out = capsys.readouterr().out
    assert plugins.plugin_errors() == {}
    # sample_task_1 is an EmptyOperator: set to success by the scheduler without running, so
    # no listener hears it run; its success is heard, as every success the door records
    assert out.count("Task instance is in running state") == 1
    assert "Current task name:sample_task_2" in out and "Dag name:example_display_name" in out
    assert "Current task name:sample_task_1" not in out
    assert out.count("Task instance in success state") == 2
    assert "Dag run  in running state" in out and "Dag run in success state" in out
