"""The real scheduler and LocalExecutor, on SQLite and PostgreSQL: outcomes, isolation, history."""

from __future__ import annotations

import os
import signal
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler

DAG_FILE = textwrap.dedent(
    '''
    import ctypes, os, time
    from datetime import timedelta
    from statewright.sdk import DAG, task, EmptyOperator, BashOperator

    with DAG("outcomes"):
        @task
        def ok():
            return {"answer": 42}

        @task
        def exits():
            os._exit(3)

        @task
        def segfaults():
            ctypes.string_at(0)

        @task(execution_timeout=timedelta(seconds=0.5))
        def too_slow():
            time.sleep(30)

        @task(retries=1, retry_delay=timedelta(seconds=0))
        def flaky(**context):
            if context["ti"].try_number == 1:
                raise ConnectionError("first try fails")
            return "second"

        @task
        def unstorable():
            return object()

        @task
        def uses(value):
            assert value == {"answer": 42}
            return value["answer"] + 1

        bad = BashOperator(task_id="bad_exit", bash_command="exit 5")
        after_bad = EmptyOperator(task_id="after_bad")
        uses(ok())
        exits(); segfaults(); too_slow(); flaky(); unstorable()
        bad >> after_bad
    '''
)


@pytest.fixture
def running(engine: Engine, tmp_path: Path) -> Iterator[dict[str, Any]]:
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "outcomes.py").write_text(DAG_FILE)
    DagProcessor(engine, tmp_path / "dags").run_once()
    views = DagViewCache()
    executor = LocalExecutor(engine, parallelism=3, views=views, logs_folder=tmp_path / "logs",
                             heartbeat_seconds=0.5)
    executor.start()
    scheduler = Scheduler(engine, executor, views=views)
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(stop,), daemon=True)
    thread.start()
    try:
        yield {"engine": engine, "executor": executor, "logs": tmp_path / "logs"}
    finally:
        stop.set()
        thread.join(10)
        executor.stop()


def _wait_for_run(engine: Engine, dag_id: str, run_id: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            run = run_repo.get_by_run_id(conn, dag_id, run_id)
        if run.state in ("success", "failed"):
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not finish in {timeout}s")


def test_every_outcome_lands_in_its_state_and_the_pool_survives(running: dict[str, Any]) -> None:
    engine = running["engine"]
    with transaction(engine) as conn:
        _, run_id = trigger_dag(conn, "outcomes", now=utcnow(), actor=Actor.USER)
    run = _wait_for_run(engine, "outcomes", run_id)
    with engine.connect() as conn:
        tis = {t.task_id: t for t in ti_repo.by_run(conn, run.id)}
        history = {t: ti_repo.history_of(conn, tis[t].id) for t in tis}
        flaky_edges = [(h.from_state, h.to_state, h.actor, h.try_number)
                       for h in transitions_log.for_task_instance(conn, tis["flaky"].id)]
    got = {t: (ti.state, ti.state_name, ti.try_number) for t, ti in tis.items()}
    assert got == {
        "ok": ("success", "Success", 1),
        "uses": ("success", "Success", 1),
        "exits": ("failed", "Crashed", 1),
        "segfaults": ("failed", "Crashed", 1),
        "too_slow": ("failed", "TimedOut", 1),
        "flaky": ("success", "Success", 2),
        "unstorable": ("failed", "Failed", 1),
        "bad_exit": ("failed", "Failed", 1),
        "after_bad": ("upstream_failed", "UpstreamFailed", 0),
    }
    assert run.state == "failed"
    assert "exit code 3" in tis["exits"].state_message
    assert "cannot be stored as JSON" in tis["unstorable"].state_message
    assert "exit code 5" in tis["bad_exit"].state_message
    # one history row per finished try; the retry kept both tries
    assert [(h.try_number, h.state) for h in history["flaky"]] == [(1, "up_for_retry"),
                                                                     (2, "success")]
    # each finished try's row names the DAG version it ran (carried from its start; crashed
    # and timed-out tries too)
    assert all(h.dag_version_id is not None and h.dag_version_id == tis[t].dag_version_id
               for t, rows in history.items() for h in rows), history
    assert ("running", "up_for_retry", "worker", 1) in flaky_edges
    assert ("queued", "running", "executor", 2) in flaky_edges
    assert flaky_edges[-1] == ("running", "success", "worker", 2)
    # a per-try log file for each try
    logs = sorted(p.name for p in running["logs"].rglob("*.log") if "task_id=flaky" in str(p))
    assert logs == ["attempt=1.log", "attempt=2.log"]
    assert running["executor"].crashed_tries == 2


def test_a_second_run_still_runs_after_crashes(running: dict[str, Any]) -> None:
    engine = running["engine"]
    ids = []
    for i in range(2):
        with transaction(engine) as conn:
            ids.append(trigger_dag(conn, "outcomes", now=utcnow(), actor=Actor.USER,
                                   run_id=f"r{i}")[1])
    for rid in ids:
        run = _wait_for_run(engine, "outcomes", rid)
        with engine.connect() as conn:
            ok = ti_repo.get_by_key(conn, run.id, "uses")
        assert ok.state == "success"


def test_the_supervisor_process_reports_its_transitions_and_frees_its_slots(
        running: dict[str, Any]) -> None:
    """The tries run in the executor's supervisor process; what it commits reaches this
    process's listeners (so the scheduler wakes at once) and every submission frees its slot."""
    from statewright.db import transition as door

    engine, executor = running["engine"], running["executor"]
    assert executor.supervisor_pid not in (None, os.getpid())
    seen: list[door.TransitionEvent] = []
    remove = door.add_transition_listener(seen.extend)
    try:
        with transaction(engine) as conn:
            _, run_id = trigger_dag(conn, "outcomes", now=utcnow(), actor=Actor.USER)
        _wait_for_run(engine, "outcomes", run_id)
    finally:
        remove()
    edges = {(e.task_id, e.frm, e.to, e.actor) for e in seen if e.run_id == run_id}
    assert ("ok", "queued", "running", "executor") in edges
    assert ("ok", "running", "success", "worker") in edges
    assert ("exits", "running", "failed", "worker") in edges
    deadline = time.monotonic() + 120  # ends a wait for slots that are never given back
    while executor.busy_count() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert executor.busy_count() == 0
    assert executor.slots_available() == executor.parallelism + executor.queue_depth


def test_a_killed_supervisor_is_replaced_and_runs_go_on(running: dict[str, Any]) -> None:
    engine, executor = running["engine"], running["executor"]
    old = executor.supervisor_pid
    os.kill(old, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while executor.supervisor_pid == old and time.monotonic() < deadline:
        time.sleep(0.05)
    assert executor.supervisor_pid not in (None, old)
    with transaction(engine) as conn:
        _, run_id = trigger_dag(conn, "outcomes", now=utcnow(), actor=Actor.USER)
    run = _wait_for_run(engine, "outcomes", run_id)
    with engine.connect() as conn:
        assert ti_repo.get_by_key(conn, run.id, "uses").state == "success"


def _task_pids(engine: Engine, run_id: str) -> list[int]:
    run = _wait_for_run(engine, "outcomes", run_id)
    with engine.connect() as conn:
        return [ti_repo.get_by_key(conn, run.id, t).pid for t in ("ok", "uses")]


@pytest.mark.skipif(not os.path.exists("/proc/self/comm"), reason="process names: Linux")
def test_the_supervisor_and_its_task_processes_say_what_they_are(
        running: dict[str, Any]) -> None:
    """They share the fork server's command line; their names (what top and ps show) tell a
    supervisor from a task process."""
    import psutil

    engine, executor = running["engine"], running["executor"]
    assert psutil.Process(executor.supervisor_pid).name() == "sw-supervisor"
    with transaction(engine) as conn:
        _, run_id = trigger_dag(conn, "outcomes", now=utcnow(), actor=Actor.USER)
    pids = [p for p in _task_pids(engine, run_id) if psutil.pid_exists(p)]
    assert pids  # the processes that ran them stay for the next tries (warm, idle)
    assert {psutil.Process(p).name() for p in pids} == {"sw-task"}


def test_task_processes_come_from_the_supervisors_fork_server(running: dict[str, Any]) -> None:
    """One fork server per tree: the supervisor (forked by the fork server) forks its task
    processes from that same server instead of starting a second interpreter; if that server is
    killed on its own, the supervisor starts one of its own and runs go on."""
    import psutil

    engine, executor = running["engine"], running["executor"]
    server = psutil.Process(executor.supervisor_pid).ppid()
    assert psutil.Process(server).ppid() == os.getpid()  # the fork server this process started
    assert not [c for c in psutil.Process(executor.supervisor_pid).children()
                if "forkserver" in " ".join(c.cmdline())]
    with transaction(engine) as conn:
        _, run_id = trigger_dag(conn, "outcomes", now=utcnow(), actor=Actor.USER)
    pids = _task_pids(engine, run_id)
    assert {psutil.Process(p).ppid() for p in pids if psutil.pid_exists(p)} <= {server}

    os.kill(server, signal.SIGKILL)
    # The processes it forked lose their exit-status pipe: a try given to one ends Crashed
    # (as when a supervisor's own fork server was killed); they are replaced by forks of a
    # fork server the supervisor starts, and the next run succeeds.
    for _ in range(2):
        with transaction(engine) as conn:
            _, run_id = trigger_dag(conn, "outcomes", now=utcnow(), actor=Actor.USER)
        run = _wait_for_run(engine, "outcomes", run_id)
    with engine.connect() as conn:
        uses = ti_repo.get_by_key(conn, run.id, "uses")
    assert uses.state == "success"
    own = psutil.Process(uses.pid).ppid() if psutil.pid_exists(uses.pid) else None
    assert own in (None, *[c.pid for c in psutil.Process(executor.supervisor_pid).children()])
