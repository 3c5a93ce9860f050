"""Tasks awaiting input under the real scheduler and local executor (task processes): with one
worker slot, three tasks all wait at once (the slot is freed by each), then resume on their
responses; on SQLite and PostgreSQL."""

from __future__ import annotations

import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor, Person
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.sdk.loader import load_dag_file
from statewright.services import hitl as hitl_service
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig

DAG_FILE = textwrap.dedent('''
    from statewright.sdk import DAG, HITLOperator

    with DAG("askers"):
        for i in range(3):
            HITLOperator(task_id=f"ask{i}", subject=f"Question {i}", options=["yes", "no"])
''')


def _until(check: Callable[[], bool], seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def test_waiting_tasks_hold_no_worker_slot(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "askers.py"
    path.write_text(DAG_FILE)
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, load_dag_file(path).dags["askers"].serialize(), now=utcnow())
        dag_repo.set_paused(conn, "askers", False)
    views = DagViewCache()
    executor = LocalExecutor(engine, parallelism=1, views=views, logs_folder=tmp_path / "logs")
    executor.start()
    idle = executor.slots_available()
    scheduler = Scheduler(engine, executor, views=views, config=SchedulerConfig(idle_seconds=0.1))
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(stop,))
    thread.start()

    def states() -> list[str]:
        with engine.connect() as conn:
            return [t.state for t in ti_repo.by_run(conn, run_pk)]

    try:
        with transaction(engine) as conn:
            run_pk, run_id = trigger_dag(conn, "askers", now=utcnow(), actor=Actor.USER)
        assert _until(lambda: states() == ["awaiting_input"] * 3), states()
        # nothing in flight while all three wait (the executor hears of each end just after the
        # task's own commit, so the slot comes back a moment after the state)
        assert _until(lambda: executor.slots_available() == idle), executor.slots_available()
        with engine.connect() as conn:
            assert all(t.pid is None or t.state == "awaiting_input"
                       for t in ti_repo.by_run(conn, run_pk))
        who = hitl_service.Responder("ann", ("operator",), Person(Actor.API, "ann"))
        for i in range(3):
            hitl_service.respond(engine, "askers", run_id, f"ask{i}", chosen_options=["yes"],
                                 params_input={}, responder=who, now=utcnow())
        assert _until(lambda: run_repo_state(engine, run_pk) == "success")
    finally:
        stop.set()
        thread.join(15)
        executor.stop()
    assert states() == ["success"] * 3


def run_repo_state(engine: Engine, run_pk: int) -> str:
    with engine.connect() as conn:
        return str(run_repo.get(conn, run_pk).state)
