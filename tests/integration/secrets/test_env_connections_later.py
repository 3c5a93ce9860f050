"""A connection defined in the executor's environment after the fork server started (an earlier
executor of the same process started it) still reaches the executor's tasks: their worker
answers from its own environment before the database."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.sdk import secrets
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler

DAG_FILE = '''
from datetime import datetime
from statewright.sdk import DAG, BaseHook, Variable, task

with DAG("late_env", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    @task
    def read() -> str:
        return BaseHook.get_connection("late_conn").host + "/" + Variable.get("late_var")
    read()
'''


def _run_once(engine: Engine, dags: Path, logs: Path) -> tuple[str, Any]:
    views = DagViewCache()
    executor = LocalExecutor(engine, parallelism=1, views=views, logs_folder=logs,
                             heartbeat_seconds=0.5)
    executor.start()
    scheduler = Scheduler(engine, executor, views=views)
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(stop,), daemon=True)
    thread.start()
    try:
        with transaction(engine) as conn:
            _, run_id = trigger_dag(conn, "late_env", now=utcnow(), actor=Actor.USER)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            with engine.connect() as conn:
                run = run_repo.get_by_run_id(conn, "late_env", run_id)
            if run is not None and run.state in ("success", "failed"):
                with engine.connect() as conn:
                    (ti,) = ti_repo.by_run(conn, run.id)
                return run.state, ti
            time.sleep(0.1)
        raise AssertionError("the run did not finish")
    finally:
        stop.set()
        thread.join(10)
        executor.stop()


def test_a_connection_set_after_the_fork_server_started_reaches_the_task(
        engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "late_env.py").write_text(DAG_FILE)
    DagProcessor(engine, tmp_path / "dags").run_once()
    first, _ = _run_once(engine, tmp_path / "dags", tmp_path / "logs")  # starts the fork server
    assert first == "failed"  # nothing defined yet
    monkeypatch.setenv("STATEWRIGHT_CONN_LATE_CONN", "postgresql://u:pw@db.example.org:5432/x")
    monkeypatch.setenv("AIRFLOW_VAR_LATE_VAR", "v1")
    secrets.clear_cache()
    state, ti = _run_once(engine, tmp_path / "dags", tmp_path / "logs")
    assert state == "success", ti.state_message
