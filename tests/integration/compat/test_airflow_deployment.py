"""With STATEWRIGHT_AIRFLOW_COMPAT=true, the DAG processor, the scheduler and the LocalExecutor's
task processes take Airflow DAG files unedited (SQLite and PostgreSQL); a file using what
statewright lacks gets its own import error, and the other files load."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Iterator
from multiprocessing import forkserver
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import import_errors
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler

AIRFLOW_FILE = textwrap.dedent('''
    import pendulum
    from airflow.providers.standard.operators.bash import BashOperator
    from airflow.sdk import DAG, task
    from airflow.utils.trigger_rule import TriggerRule

    with DAG("from_airflow", schedule=None,
             start_date=pendulum.datetime(2024, 1, 1, tz="UTC")):
        @task
        def today():
            from airflow.sdk import get_current_context  # imported while the task runs
            return get_current_context()["run_id"]

        @task.branch
        def pick():
            return "kept"

        kept = BashOperator(task_id="kept", bash_command="echo kept")
        dropped = BashOperator(task_id="dropped", bash_command="exit 1")
        end = BashOperator(task_id="end", bash_command="echo end",
                           trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS)
        today() >> pick() >> [kept, dropped] >> end
''')
PROVIDER_FILE = textwrap.dedent('''
    from airflow.sdk import DAG
    from airflow.providers.snowflake.operators.snowflake import SnowflakeOperator
''')
NAME_FILE = textwrap.dedent('''
    from airflow.sdk import DAG, get_parsing_context
''')
NATIVE_FILE = textwrap.dedent('''
    from statewright.sdk import DAG, EmptyOperator
    with DAG("native", schedule=None):
        EmptyOperator(task_id="a")
''')


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    dags = tmp_path / "dags"
    dags.mkdir()
    for name, text in (("from_airflow.py", AIRFLOW_FILE), ("provider.py", PROVIDER_FILE),
                       ("name.py", NAME_FILE), ("native.py", NATIVE_FILE)):
        (dags / name).write_text(text)
    return dags


@pytest.fixture
def fresh_forkserver(folder: Path) -> Iterator[None]:
    """Task processes are forked from multiprocessing's forkserver, which keeps the environment
    it started with (a deployment sets the switch before it starts; this test sets it midway):
    a new forkserver for this test, with the switch, and none left behind with it."""
    forkserver._forkserver._stop()  # type: ignore[attr-defined]
    yield
    forkserver._forkserver._stop()  # type: ignore[attr-defined]


def _run_to_the_end(engine: Engine, scheduler: Scheduler, dag_id: str, run_id: str) -> Any:
    """Scheduler passes in this thread until the run ends (tries run in task processes)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            run = run_repo.get_by_run_id(conn, dag_id, run_id)
        if run.state in ("success", "failed"):
            return run
        if not scheduler.run_once().did_work:
            time.sleep(0.02)  # waiting for the task processes' outcomes
    raise AssertionError(f"run {run_id} of {dag_id} did not end within 60 s")


def test_airflow_files_load_per_file_and_run_on_the_local_executor(
        engine: Engine, folder: Path, tmp_path: Path, fresh_forkserver: None) -> None:
    DagProcessor(engine, folder, timeout=30.0).run_once()
    with engine.connect() as conn:
        dag_ids = sorted(d.dag_id for d in dag_repo.list_dags(conn))
        errors = {Path(e.filename).name: e.stacktrace for e in import_errors.list_all(conn)}
    assert dag_ids == ["from_airflow", "native"]
    assert sorted(errors) == ["name.py", "provider.py"]
    assert "apache-airflow-providers-snowflake" in errors["provider.py"]
    assert "'get_parsing_context'" in errors["name.py"] and "airflow.sdk" in errors["name.py"]
    assert "coming-from-airflow.md" in errors["name.py"]

    views = DagViewCache()
    executor = LocalExecutor(engine, parallelism=2, views=views, logs_folder=tmp_path / "logs",
                             heartbeat_seconds=0.5)
    executor.start()
    try:
        with transaction(engine) as conn:
            _, run_id = trigger_dag(conn, "from_airflow", now=utcnow(), actor=Actor.USER)
        run = _run_to_the_end(engine, Scheduler(engine, executor, views=views),
                              "from_airflow", run_id)
    finally:
        executor.stop()
    with engine.connect() as conn:
        states = {t.task_id: t.state for t in ti_repo.by_run(conn, run.id)}
    assert states == {"today": "success", "pick": "success", "kept": "success",
                      "dropped": "skipped", "end": "success"}
    assert run.state == "success"


def test_the_switch_reaches_an_import_server_started_without_it(
        engine: Engine, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STATEWRIGHT_AIRFLOW_COMPAT")
    DagProcessor(engine, folder, timeout=30.0).run_once()
    with engine.connect() as conn:
        assert [d.dag_id for d in dag_repo.list_dags(conn)] == ["native"]
        off = {Path(e.filename).name: e.stacktrace for e in import_errors.list_all(conn)}
    assert "STATEWRIGHT_AIRFLOW_COMPAT=true" in off["from_airflow.py"]
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    DagProcessor(engine, folder, timeout=30.0).run_once(force=True)
    with engine.connect() as conn:
        assert sorted(d.dag_id for d in dag_repo.list_dags(conn)) == ["from_airflow", "native"]
