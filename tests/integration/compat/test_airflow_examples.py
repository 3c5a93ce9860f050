"""Airflow's own example DAG files, unedited, through the compatibility layer.

Every file in ``SUPPORTED`` runs with ``dag.test()`` (SQLite and PostgreSQL) and ends as it
ended in Airflow 3.1 (``expected.json``: the run's state and each task instance's state, for
the same logical date). Every other file is in ``NOT_YET`` with what ``statewright dags check
--airflow`` must name for it. Both lists are data: a file moves from ``NOT_YET`` to
``SUPPORTED`` when statewright gains what it uses.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine

from statewright.compat.airflow.check import FileReport, check_path
from statewright.sdk.loader import list_dag_files, load_dag_file

EXAMPLES = Path(__file__).parents[2] / "fixtures" / "airflow_examples"
EXPECTED = json.loads((EXAMPLES / "expected.json").read_text())
LOGICAL_DATE = datetime.fromisoformat(EXPECTED["logical_date"])

SUPPORTED: tuple[str, ...] = (
)
"""Files that load and whose runs end as in Airflow."""

NOT_YET: dict[str, str] = {
}
"""File → what ``dags check --airflow`` reports for it (a missing name or module, an error, or
a feature statewright does not have yet)."""


def _all_files() -> set[str]:
    return {str(p.relative_to(EXAMPLES)) for p in list_dag_files(EXAMPLES)}


def test_every_example_file_is_classified_once() -> None:
    assert not set(SUPPORTED) & set(NOT_YET)
    assert set(SUPPORTED) | set(NOT_YET) == _all_files()


@pytest.mark.parametrize("name", SUPPORTED)
def test_a_supported_example_ends_as_in_airflow(
        name: str, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    loaded = load_dag_file(EXAMPLES / name)
    assert loaded.error is None, loaded.error
    expected = EXPECTED["files"][Path(name).name]["dags"]
    assert sorted(loaded.dags) == sorted(expected)
    for dag_id, dag in loaded.dags.items():
        run = dag.test(logical_date=LOGICAL_DATE, engine=engine)
        seen = {"state": run.state.value, "task_instances": dict(sorted(run.states.items()))}
        assert seen == expected[dag_id], dag_id


@pytest.fixture(scope="module")
def report() -> dict[str, FileReport]:
    return {str(Path(f.path).relative_to(EXAMPLES)): f
            for f in check_path(EXAMPLES, airflow=True).files}


@pytest.mark.parametrize("name", sorted(NOT_YET))
def test_dags_check_names_what_an_unsupported_example_lacks(
        name: str, report: dict[str, FileReport]) -> None:
    found = report[name]
    said = "\n".join([*found.missing, found.error or "", *found.features])
    assert NOT_YET[name] in said, said


@pytest.mark.parametrize("name", SUPPORTED)
def test_dags_check_says_a_supported_example_loads(
        name: str, report: dict[str, FileReport]) -> None:
    found = report[name]
    expected = EXPECTED["files"][Path(name).name]["dags"]
    assert found.loads and found.missing == [] and sorted(found.dags) == sorted(expected)
