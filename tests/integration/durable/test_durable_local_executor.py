"""Task state through real task processes: the local executor's children write and read it up
their pipes, the supervising worker applies it (SQLite and PostgreSQL)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler
from statewright.services.task_state_view import task_state

DAG_FILE = '''
from datetime import datetime, timedelta
from statewright.sdk import DAG, NEVER_EXPIRE, task

with DAG("ts_local", schedule=None, start_date=datetime(2024, 1, 1)):
    @task(retries=1, retry_delay=timedelta(seconds=0))
    def job(task_state_store=None, ti=None):
        first = task_state_store.get("job_id")
        if first is None:
            task_state_store.set("job_id", f"J-{ti.try_number}", retention=NEVER_EXPIRE)
            raise RuntimeError("lost the connection after submitting")
        task_state_store.set("attached_on_try", ti.try_number)
        return first

    @task
    def too_big(task_state_store=None):
        task_state_store.set("blob", "x" * 100_000)

    job()
    too_big()
'''


def _wait(engine: Engine, run_id: str, timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:  # real processes: poll the database for the run's end
        with engine.connect() as conn:
            run = run_repo.get_by_run_id(conn, "ts_local", run_id)
        if run.state in ("success", "failed"):
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not finish in {timeout}s")


def test_task_processes_keep_state_through_their_worker(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "ts_local.py").write_text(DAG_FILE)
    DagProcessor(engine, tmp_path / "dags").run_once()
    views = DagViewCache()
    executor = LocalExecutor(engine, parallelism=2, views=views, logs_folder=tmp_path / "logs",
                             heartbeat_seconds=0.5)
    executor.start()
    scheduler = Scheduler(engine, executor, views=views)
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(stop,), daemon=True)
    thread.start()
    try:
        with transaction(engine) as conn:
            _, run_id = trigger_dag(conn, "ts_local", now=utcnow(), actor=Actor.USER)
        run = _wait(engine, run_id)
    finally:
        stop.set()
        thread.join(10)
        executor.stop()
    with engine.connect() as conn:
        tis = {t.task_id: t for t in ti_repo.by_run(conn, run.id)}
        kept = {r["key"]: r["value"] for r in task_state(conn, "ts_local", run_id, "job")}
    assert (tis["job"].state, tis["job"].try_number) == ("success", 2)
    assert kept == {"job_id": "J-1", "attached_on_try": 2}
    assert tis["too_big"].state == "failed"
    assert "'blob'" in (tis["too_big"].state_message or ""), tis["too_big"].state_message
