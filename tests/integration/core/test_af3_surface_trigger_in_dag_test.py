"""TriggerDagRunOperator inside dag.test(), as in Airflow 3.3: the DAG it names is looked up in
the tested DAG's file and the DAGs folder and stored in dag.test's database, where the operator
creates its run, queued (dag.test runs only its own run); a DAG found nowhere fails the task."""

from __future__ import annotations

import shutil
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select

from statewright.db.engine import make_engine
from statewright.db.tables import dag_run
from statewright.sdk.loader import load_dag_file

EXAMPLES = Path(__file__).parents[2] / "fixtures" / "airflow_examples"
CONTROLLER = '''
from statewright.sdk import DAG, EmptyOperator
from statewright.sdk.operators import TriggerDagRunOperator

with DAG("controller", schedule=None):
    TriggerDagRunOperator(task_id="trigger", trigger_dag_id="{target}", conf={{"n": 1}})
{extra}
'''
TARGET = '''
from statewright.sdk import DAG, EmptyOperator

with DAG("{name}", schedule=None):
    EmptyOperator(task_id="work")
'''


def _runs(url: str) -> list[tuple[str, str, object]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return sorted((r.dag_id, r.state, r.conf) for r in conn.execute(select(dag_run)))
    finally:
        engine.dispose()


@pytest.fixture
def dags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "dags"
    folder.mkdir()
    monkeypatch.setenv("STATEWRIGHT_DAGS_FOLDER", str(folder))
    return folder


def _controller(dags: Path, target: str, extra: str = "") -> object:
    path = dags / "controller.py"
    path.write_text(textwrap.dedent(CONTROLLER.format(target=target, extra=extra)))
    loaded = load_dag_file(path)
    assert loaded.error is None, loaded.error
    return loaded.dags["controller"]


def test_the_target_in_the_dags_folder_gets_a_queued_run(dags: Path, tmp_path: Path) -> None:
    (dags / "target.py").write_text(textwrap.dedent(TARGET.format(name="target")))
    (dags / "broken.py").write_text("raise RuntimeError('not a DAG file')\n")
    url = f"sqlite:///{tmp_path / 'test.db'}"
    result = _controller(dags, "target").test(database_url=url)  # type: ignore[attr-defined]
    assert result.state == "success" and result.states == {"trigger": "success"}
    assert _runs(url) == [("controller", "success", {}), ("target", "queued", {"n": 1})]


def test_the_target_in_the_same_file(dags: Path, tmp_path: Path) -> None:
    extra = TARGET.format(name="sibling")
    url = f"sqlite:///{tmp_path / 'test.db'}"
    result = _controller(dags, "sibling", extra).test(database_url=url)  # type: ignore[attr-defined]
    assert result.states == {"trigger": "success"}
    assert ("sibling", "queued", {"n": 1}) in _runs(url)


def test_a_target_found_nowhere_fails_the_task(dags: Path) -> None:
    result = _controller(dags, "nowhere").test()  # type: ignore[attr-defined]
    assert result.state == "failed" and result.states == {"trigger": "failed"}
    assert "nowhere" in (result.ti("trigger").state_message or "")


def test_airflows_controller_example_unedited(dags: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    shutil.copy(EXAMPLES / "standard" / "example_trigger_controller_dag.py", dags)
    shutil.copy(EXAMPLES / "core" / "example_trigger_target_dag.py", dags)
    loaded = load_dag_file(dags / "example_trigger_controller_dag.py")
    assert loaded.error is None, loaded.error
    url = f"sqlite:///{tmp_path / 'test.db'}"
    result = loaded.dags["example_trigger_controller_dag"].test(
        logical_date=datetime(2025, 1, 6, tzinfo=UTC), database_url=url)
    assert result.state == "success" and result.states == {"test_trigger_dagrun": "success"}
    assert ("example_trigger_target_dag", "queued", {"message": "Hello World"}) in _runs(url)
