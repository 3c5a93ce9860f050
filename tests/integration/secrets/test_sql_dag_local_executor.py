"""The extract-check-load DAG of the SQL operators against PostgreSQL and MariaDB, under the
real scheduler and local executor (metadata on SQLite and on PostgreSQL): the connections come
from the database through the worker."""

from __future__ import annotations

import threading
from pathlib import Path

from cryptography.fernet import MultiFernet
from sql_dag import check_outcome, dag_text, seed_targets, wait_for_run
from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import xcoms as xcom_repo
from statewright.sdk.serde import deserialize
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler


def test_extract_check_load_runs_under_the_local_executor(
        engine: Engine, cipher: MultiFernet, tmp_path: Path) -> None:
    suffix = seed_targets(engine, cipher)
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "sql_ecl.py").write_text(dag_text(suffix))
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
            _, run_id = trigger_dag(conn, "sql_ecl", now=utcnow(), actor=Actor.USER)
        run = wait_for_run(engine, "sql_ecl", run_id)
    finally:
        stop.set()
        thread.join(10)
        executor.stop()
    with engine.connect() as conn:
        tis = {t.task_id: t for t in ti_repo.by_run(conn, run.id)}
        values = xcom_repo.get_return_values(conn, [(run.id, t) for t in tis])
    # the rows as Airflow returns them: tuples (stored in XCom's tagged form)
    assert deserialize(values[(run.id, "pg_target_extract")]) == [(2, 20), (3, 30)]
    assert values[(run.id, "maria_target_load")] == [2, 50]
    assert values[(run.id, "pg_target_load")] == [2, 50]
    check_outcome(engine, run, suffix)
