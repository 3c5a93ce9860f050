"""The example DAGs that ``standalone --examples`` loads run to the end their docstrings promise:
each file imports cleanly, and one run of each (in process, deferrals through the in-process
triggerer) ends as expected, task by task."""

from __future__ import annotations

from pathlib import Path

import pytest

from statewright.sdk.loader import load_dag_file

EXAMPLES = Path(__file__).resolve().parents[3] / "src" / "statewright" / "example_dags"

EXPECTED = {
    "example_hello": ("success", None),
    "example_params": ("success", {"window": "success", "report": "success"}),
    "example_branch": ("success", None),
    "example_retry": ("success", {"flaky": "success", "report": "success"}),
    "example_failure": ("failed", {"broken": "failed", "publish": "upstream_failed",
                                   "cleanup": "success"}),
    "example_deferrable": ("success", {"wait_3s": "success", "quiet_period": "success",
                                       "report": "success"}),
    "example_task_groups": ("success", {
        "ingest.wait_for_input": "success", "ingest.split": "success",
        "emea.clean": "success", "emea.total": "success",
        "apac.clean": "success", "apac.total": "success", "report": "success"}),
    "example_mapping": ("success", None),
}


def test_every_example_file_is_covered_and_imports() -> None:
    found = {}
    for path in sorted(EXAMPLES.glob("example_*.py")):
        loaded = load_dag_file(path)
        assert loaded.error is None, f"{path.name}: {loaded.error}"
        found.update(loaded.dags)
    assert set(found) == set(EXPECTED)


@pytest.mark.parametrize("dag_id", sorted(EXPECTED))
def test_an_example_run_ends_as_its_docstring_says(dag_id: str) -> None:
    dag = load_dag_file(EXAMPLES / f"{dag_id}.py").dags[dag_id]
    result = dag.test()
    state, tasks = EXPECTED[dag_id]
    assert result.state.value == state, result.states
    if tasks is not None:
        assert result.states == tasks


def test_the_deferrable_example_waits_in_deferred_and_resumes_its_try() -> None:
    dag = load_dag_file(EXAMPLES / "example_deferrable.py").dags["example_deferrable"]
    result = dag.test()
    quiet = result.ti("quiet_period")
    assert quiet.try_number == 1  # a resume continues the try
    assert quiet.return_value.startswith("quiet for 2s")
    path = [(h["from_state"], h["to_state"], h["name"]) for h in result.history
            if h.get("task_id") == "quiet_period"]
    assert ("running", "deferred", "Deferred") in path
    assert ("deferred", "scheduled", "Scheduled") in path
    assert ("queued", "running", "Resuming") in path
    assert result.ti("report").return_value == quiet.return_value


def test_the_task_groups_example_reports_both_totals() -> None:
    dag = load_dag_file(EXAMPLES / "example_task_groups.py").dags["example_task_groups"]
    result = dag.test()
    assert result.ti("report").return_value == {"emea": 60, "apac": 15}
    data = dag.serialize()
    assert [g["group_id"] for g in data["task_groups"]] == ["ingest", "emea", "apac"]
    assert {(e["upstream"], e["label"]) for e in data["edge_info"]} == {
        ("emea.total", "both totals"), ("apac.total", "both totals")}


def test_the_mapping_example_expands_per_file_and_per_combination() -> None:
    dag = load_dag_file(EXAMPLES / "example_mapping.py").dags["example_mapping"]
    result = dag.test()
    counts = sorted((t for t in result.task_instances.values() if t.task_id == "count_rows"),
                    key=lambda t: t.map_index)
    assert [t.rendered_map_index for t in counts] == ["orders.csv", "customers.csv",
                                                      "returns.csv"]
    assert result.ti("total").return_value == sum(t.return_value for t in counts)
    resized = sorted((t for t in result.task_instances.values() if t.task_id == "resize"),
                     key=lambda t: t.map_index)
    assert [t.return_value for t in resized] == [
        "logo.png@320px", "logo.png@1280px", "banner.png@320px", "banner.png@1280px"]
