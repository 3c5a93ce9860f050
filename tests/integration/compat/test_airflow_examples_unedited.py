"""Airflow's own example DAG files, unedited, through the compatibility layer.

Every file in ``SUPPORTED`` runs with ``dag.test()`` (SQLite and PostgreSQL) and ends as it
ended in Airflow 3.3.2 (``expected.json``: the run's state and each task instance's state, for
the same logical date). Every other file is in ``NOT_YET`` with what ``statewright dags check
--airflow`` must name for it. Both lists are data: a file moves from ``NOT_YET`` to
``SUPPORTED`` when statewright gains what it uses.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.compat.airflow.check import FileReport, check_path
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.sdk.loader import list_dag_files, load_dag_file
from statewright.sdk.operators.datetime_branch import BranchDayOfWeekOperator

EXAMPLES = Path(__file__).parents[2] / "fixtures" / "airflow_examples"
EXPECTED = json.loads((EXAMPLES / "expected.json").read_text())
LOGICAL_DATE = datetime.fromisoformat(EXPECTED["logical_date"])
# ``example_branch_day_of_week_operator.py`` branches on today's week day (not the logical
# date's): its expected outcome was recorded on a Saturday (2026-11-28), so its tasks see that
# Saturday here whatever day the suite runs on.
RECORDED_ON = datetime(2026, 11, 28, 12, tzinfo=UTC)

SUPPORTED: tuple[str, ...] = (
    "core/example_asset_alias.py",
    "core/example_asset_alias_with_no_taskflow.py",
    "core/example_asset_allow_teams.py",
    "core/example_asset_decorator.py",
    "core/example_asset_with_watchers.py",
    "core/example_assets.py",
    "core/example_branch_labels.py",
    "core/example_branch_python_dop_operator_3.py",
    "core/example_complex.py",
    "core/example_display_name.py",
    "core/example_failed_dag.py",
    "core/example_dynamic_task_mapping.py",
    "core/example_dynamic_task_mapping_with_no_taskflow_operators.py",
    "core/example_inlet_event_extra.py",
    "core/example_latest_only_with_trigger.py",
    "core/example_nested_branch_dag.py",
    "core/example_params_trigger_ui.py",
    "core/example_passing_params_via_test_command.py",
    "core/example_retry_policy.py",
    "core/example_setup_teardown.py",
    "core/example_setup_teardown_taskflow.py",
    "core/example_simplest_dag.py",
    "core/example_skip_dag.py",
    "core/example_task_group.py",
    "core/example_task_group_decorator.py",
    "core/example_time_delta_sensor_async.py",
    "core/example_trigger_target_dag.py",
    "core/example_xcom.py",
    "core/example_xcomargs.py",
    "core/tutorial.py",
    "core/tutorial_dag.py",
    "core/tutorial_taskflow_api.py",
    "core/tutorial_taskflow_api_virtualenv.py",
    "core/tutorial_taskflow_templates.py",
    "standard/example_bash_decorator.py",
    "standard/example_bash_operator.py",
    "standard/example_branch_day_of_week_operator.py",
    "standard/example_external_task_child_deferrable.py",
    "standard/example_latest_only.py",
    "standard/example_measurement_correction_decorator.py",
    "standard/example_measurement_correction_operator.py",
    "standard/example_python_decorator.py",
    "standard/example_python_operator.py",
    "standard/example_sensor_decorator.py",
    "standard/example_short_circuit_decorator.py",
    "standard/example_short_circuit_operator.py",
)
"""Files that load and whose runs end as in Airflow."""

NOT_YET: dict[str, str] = {
    # airflow.configuration is answered (Airflow 2 folders); Airflow's own example helpers are not.
    "core/example_kubernetes_executor.py": "airflow.example_dags.libs.helper (module)",
    "core/example_local_kubernetes_executor.py": "airflow.example_dags.libs.helper (module)",
}
"""File → what ``dags check --airflow`` reports for it (a missing name or module, an error, or
a feature statewright does not have yet)."""

OUTSIDE: dict[str, str] = {
    "core/tutorial_objectstorage.py":
        "loads here (ObjectStoragePath); its tasks call the open-meteo API over the "
        "network, write to S3 at AWS and hand path.fs to duckdb, which wants an fsspec "
        "file system (statewright's ObjectStoragePath has its own stores)",
    "core/example_custom_weight.py":
        "Airflow 3.3.2 itself refuses it until its plugin registers the weight strategy; with "
        "Airflow's plugins in the plugins folder it runs here (test_durable_airflow33_examples)",
    "core/example_workday_timetable.py":
        "Airflow 3.3.2 itself refuses it until its plugin registers the timetable; with "
        "Airflow's workday.py in the plugins folder it runs here (test_partitions_airflow_"
        "examples)",
    "core/example_params_ui_tutorial.py":
        "Airflow's own dag.test() refuses it (its param required_field has no value)",
    "core/example_dag_decorator.py": "its tasks call httpbin.org: the outcome is the network's",
    "core/example_outlet_event_extra.py":
        "Airflow's recorded failures come from its recording database, where "
        "example_inlet_event_extra.py had registered s3://output/1.txt under another name, so "
        "test-asset was inactive; alone, Airflow's three runs succeed, as they do here with "
        "their extra on each event (test_airflow_examples_outside)",
    "standard/example_branch_datetime_operator.py":
        "its second DAG branches on the time of day the test runs at",
    "standard/example_branch_operator.py":
        "its branch tasks choose at random (random.choice), so a run follows other branches "
        "than Airflow's recorded one; tests/integration/core/test_python_env_runs.py runs it "
        "and checks that each branch task follows exactly one of its four",
    "standard/example_branch_operator_decorator.py":
        "its branch tasks choose at random (random.choice), so a run follows other branches "
        "than Airflow's recorded one; tests/integration/core/test_python_env_runs.py runs it "
        "and checks that each branch task follows exactly one of its four",
    "standard/example_trigger_controller_dag.py":
        "it triggers a DAG of another file, which Airflow's recording database knew from "
        "an earlier file; here its target is in another folder (core/): beside it, dag.test() "
        "stores the target and the run ends as in Airflow (test_af3_surface_trigger_in_dag_"
        "test)",
    "standard/example_external_task_marker_dag.py":
        "Airflow's own run never ended within 180 s: the child DAG's sensors wait up to 600 s "
        "for the parent's run, one for a task group the parent does not have; with the "
        "parent's run first and short timeouts it runs here (test_airflow_examples_outside)",
    "standard/example_external_task_parent_deferrable.py":
        "Airflow's recorded outcome comes from the child_dag run that "
        "example_external_task_child_deferrable.py left in its recording database; alone, "
        "the sensor waits (7 days) for a child_dag run; after the child file it succeeds "
        "here (test_airflow_examples_outside)",
    "standard/example_sensors.py":
        "Airflow's own run never ended within 180 s: its poke-mode sensors time out one 60 s "
        "poke at a time, and its deferred TimeSensor (timeout=1) waits an hour, as Airflow "
        "gives that deferral no timeout (the sensor's timeout bounds it here); with injected "
        "sensor clocks every task ends here (test_airflow_examples_outside)",
    "standard/example_hitl_operator.py":
        "its tasks wait for people: tests/integration/api/test_api_hitl_example.py responds "
        "through the API and the run completes",
}
"""Files that load but whose outcome is not comparable: it depends on this machine or the time
of day, on a difference documented in docs/coming-from-airflow.md, or Airflow cannot run it."""


def _all_files() -> set[str]:
    return {str(p.relative_to(EXAMPLES))
            for folder in ("core", "standard") for p in list_dag_files(EXAMPLES / folder)}


def test_every_example_file_is_classified_once() -> None:
    groups = [set(SUPPORTED), set(NOT_YET), set(OUTSIDE)]
    assert sum(len(g) for g in groups) == len(set().union(*groups))
    assert set().union(*groups) == _all_files()


@pytest.fixture(scope="module")
def no_wait_sleep(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A folder whose ``sleep`` returns at once: the examples' Bash tasks (``sleep 5`` in ten
    DAGs of one file) still run through bash, without the wait."""
    folder = tmp_path_factory.mktemp("bin")
    shim = folder / "sleep"
    shim.write_text("#!/bin/sh\nexit 0\n")
    shim.chmod(0o755)
    return str(folder)


@pytest.mark.parametrize("name", SUPPORTED)
def test_a_supported_example_ends_as_in_airflow(
        name: str, engine: Engine, monkeypatch: pytest.MonkeyPatch, no_wait_sleep: str) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    monkeypatch.setenv("PATH", f"{no_wait_sleep}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(BranchDayOfWeekOperator, "clock", staticmethod(lambda: RECORDED_ON))
    loaded = load_dag_file(EXAMPLES / name)
    assert loaded.error is None, loaded.error
    if EXPECTED["files"][Path(name).name].get("error") == NO_END:
        _assert_no_end_within(loaded.dags, engine, monkeypatch)
        return
    expected = EXPECTED["files"][Path(name).name]["dags"]
    assert sorted(loaded.dags) == sorted(expected)
    for dag_id, dag in loaded.dags.items():
        run = dag.test(logical_date=LOGICAL_DATE, engine=engine)
        seen = {"state": run.state.value, "task_instances": dict(sorted(run.states.items()))}
        assert seen == expected[dag_id], dag_id


NO_END = "no end within 180 s"
"""What expected.json says of a file whose run Airflow 3.3.2 did not see end within 180 s."""


class _Horizon(Exception):
    """dag.test() was about to wait past the 180 s Airflow's recording allowed."""


class _WaitClock:
    """dag.test()'s clock and sleep: a wait moves the clock, up to ``seconds`` from the start."""

    def __init__(self, seconds: float) -> None:
        self.start = self.now = datetime.now(UTC)
        self.horizon = self.start + timedelta(seconds=seconds)

    def clock(self) -> datetime:
        return self.now

    def sleep(self, wait: float) -> None:
        if self.now + timedelta(seconds=wait) > self.horizon:
            raise _Horizon
        self.now += timedelta(seconds=wait)


def _assert_no_end_within(dags: dict[str, Any], engine: Engine,
                          monkeypatch: pytest.MonkeyPatch, seconds: float = 180.0) -> None:
    """Each DAG's run, on an injected clock that a wait moves, has not ended ``seconds`` after
    it started: dag.test() wants to wait past them, and the run and its task instances are still
    unfinished then. ``example_retry_policy.py``'s task calls api.example.com: here it is
    unreachable (requests raises its ConnectionError, an OSError but not the builtin
    ConnectionError of the policy's rule), so each try fails and is retried after the task's
    one minute; five retries outlast 180 s, as in Airflow."""
    import requests

    def unreachable(*args: Any, **kwargs: Any) -> Any:
        raise requests.exceptions.ConnectionError("api.example.com is unreachable here")

    monkeypatch.setattr(requests, "get", unreachable)
    for dag_id, dag in dags.items():
        waits = _WaitClock(seconds)
        with pytest.raises(_Horizon):
            dag.test(logical_date=LOGICAL_DATE, engine=engine, clock=waits.clock,
                     sleep=waits.sleep)
        with engine.connect() as conn:
            (run,) = run_repo.list_runs(conn, dag_id)
            tis = ti_repo.by_run(conn, run.id)
        assert run.state == "running", dag_id
        seen = sorted((t.task_id, t.state, t.try_number) for t in tis)
        assert {t.state for t in tis} <= {"up_for_retry", "scheduled", "queued", "running"}, seen
        if dag_id == "example_retry_policy":  # tries at 0, 60 and 120 s; the 4th due at 180 s
            assert seen == [("call_external_api", "up_for_retry", 3)]


@pytest.fixture(scope="module")
def report() -> Iterator[dict[str, FileReport]]:
    """``dags check --airflow`` over the examples, with Airflow's example plugins (``workday.py``
    and the others) in the plugins folder, where ``airflow.example_dags.plugins.*`` is found."""
    from statewright.sdk import plugins

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STATEWRIGHT_PLUGINS_FOLDER", str(EXAMPLES / "core33" / "plugins"))
        plugins.reset_plugins()  # loaded afresh from that folder, as `dags check` does
        try:
            yield {str(Path(f.path).relative_to(EXAMPLES)): f
                   for f in check_path(EXAMPLES, airflow=True).files}
        finally:
            plugins.reset_plugins()


@pytest.mark.parametrize("name", sorted(NOT_YET))
def test_dags_check_names_what_an_unsupported_example_lacks(
        name: str, report: dict[str, FileReport]) -> None:
    found = report[name]
    said = "\n".join([*found.missing, found.error or "", *found.features])
    if NOT_YET[name] in said:
        return
    # statewright gained it (another branch's feature): the report must still name a cause
    # for a file that does not load; a file that now loads is a candidate for SUPPORTED.
    assert found.loads or found.missing or found.error, found
    pytest.skip(f"{name} no longer lacks {NOT_YET[name]!r}: try it in SUPPORTED")


@pytest.mark.parametrize("name", [*SUPPORTED, *OUTSIDE])
def test_dags_check_says_a_supported_example_loads(
        name: str, report: dict[str, FileReport]) -> None:
    found = report[name]
    expected = EXPECTED["files"][Path(name).name].get("dags")
    assert found.loads and found.missing == []
    if expected is not None:  # None: Airflow itself could not import the file
        assert sorted(found.dags) == sorted(expected)
