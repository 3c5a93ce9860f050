"""Controls that kill running tries, with the real scheduler and LocalExecutor."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert

from statewright.core.clock import utcnow
from statewright.core.states import RUN, TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import dag_callbacks as outbox
from statewright.db.tables import trigger
from statewright.services.controls import (
    cancel_run,
    clear_task_instances,
    mark_task_instances,
    pause_run,
    resume_run,
)

DAGS = textwrap.dedent(
    '''
    import os, pathlib, signal, time
    from datetime import timedelta
    from statewright.sdk import DAG, task

    MARKS = pathlib.Path(r"@MARKS@")


    def _note(name, text=""):
        (MARKS / name).write_text(text)


    def _failure(context):
        _note(f"failure-callback-{context['ti'].task_id}-{context['ti'].try_number}")


    def _dag_done(context):
        _note(f"dag-{context['state']}-{context['run_id']}")


    with DAG("sleepy", on_failure_callback=_dag_done, on_success_callback=_dag_done):
        @task(on_failure_callback=_failure, retries=0)
        def sleeper(ti):
            _note(f"sleeper-{ti.try_number}.pid", str(os.getpid()))
            if ti.try_number == 1:
                time.sleep(60)
            return ti.try_number

        @task
        def after(value):
            return value

        after(sleeper())


    with DAG("stubborn"):
        @task(on_failure_callback=_failure)
        def ignores_sigterm():
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            _note("stubborn.pid", str(os.getpid()))
            time.sleep(60)

        ignores_sigterm()


    with DAG("mixed", on_failure_callback=_dag_done):
        @task(on_failure_callback=_failure)
        def sleeper(ti):
            _note("mixed-sleeper.pid", str(os.getpid()))
            time.sleep(60)

        @task(on_failure_callback=_failure)
        def waiter():
            return 1

        @task(retries=3, on_failure_callback=_failure)
        def retrier():
            return 1

        sleeper(); waiter(); retrier()


    with DAG("paced", on_success_callback=_dag_done):
        @task
        def slow():
            _note("slow-started")
            while not (MARKS / "slow-may-finish").exists():
                time.sleep(0.05)
            return 1

        @task
        def b(x):
            _note("b-ran")
            return x

        @task
        def c(x):
            return x

        c(b(slow()))


    with DAG("cache_and_crash"):
        @task(cache_key_fn=lambda context, arguments: "constant",
              cache_expiration=timedelta(hours=1))
        def cached():
            with open(MARKS / "cached-calls", "a") as fh:
                fh.write("x")
            return {"answer": 42}

        @task
        def crashes():
            os._exit(9)

        cached(); crashes()
    '''
)


def _pid(stack: Any, name: str) -> int:
    path: Path = stack.mark(name)
    # The file exists as soon as it is opened; wait until the pid is in it.
    stack.wait(lambda: path.exists() and path.read_text().strip().isdigit(),
               why=f"{name} written")
    return int(path.read_text())


def test_clearing_a_running_task_kills_its_try_promptly_and_reruns_it(
        stack: Any, allowed: Any, alive: Any) -> None:
    stack.load(DAGS)
    stack.new_run("sleepy")
    # The kill must not wait for the periodic check: no heartbeat comes within the test, and
    # the first try sleeps a minute, longer than the wait for the run to succeed.
    stack.start(heartbeat_seconds=600.0)
    stack.wait_state("sleepy", "sleeper", "running")
    pid = _pid(stack, "sleeper-1.pid")

    clear_task_instances(stack.engine, "r1", task_regexes=["^sleeper$"], now=utcnow())
    run = stack.wait_run("sleepy", "success", timeout=50)
    assert not alive(pid)
    tis = stack.tis("sleepy")
    assert (tis["sleeper"].state, tis["sleeper"].try_number) == ("success", 2)
    assert tis["after"].state == "success"
    rows = stack.history("sleepy")
    allowed(rows)
    sleeper = [(r.from_state, r.to_state, r.actor) for r in rows
               if r.task_id == "sleeper" and r.from_state != r.to_state]
    assert sleeper[3:6] == [("queued", "running", "executor"), ("running", "restarting", "user"),
                            ("restarting", "none", "worker")]
    assert [(t.try_number, t.state) for t in stack.tries(tis["sleeper"].id)] == [
        (1, "restarting"), (2, "success")]
    assert not stack.mark("failure-callback-sleeper-1").exists()
    assert run.state == "success"


def test_clearing_from_another_process_kills_at_the_next_heartbeat(
        stack: Any, engine: Any, alive: Any) -> None:
    stack.load(DAGS)
    stack.new_run("sleepy")
    stack.start(heartbeat_seconds=0.5)
    stack.wait_state("sleepy", "sleeper", "running")
    pid = _pid(stack, "sleeper-1.pid")
    env = {**os.environ, "STATEWRIGHT_DATABASE_URL":
           engine.url.render_as_string(hide_password=False),
           "STATEWRIGHT_HOME": str(stack.folder / "home")}
    cli = [sys.executable, "-m", "statewright.cli.main", "tasks", "clear", "r1",
           "--dag-id", "sleepy", "-t", "^sleeper$"]
    dry = subprocess.run([*cli, "--dry-run"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert dry.returncode == 0, dry.stderr
    assert "task sleeper: running -> restarting; try 1 is killed" in dry.stdout
    assert "dry run: nothing was changed" in dry.stdout
    assert stack.ti("sleepy", "sleeper").state == "running"
    done = subprocess.run([*cli, "--yes"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    stack.wait_run("sleepy", "success")
    assert not alive(pid) and stack.ti("sleepy", "sleeper").try_number == 2


def test_marking_a_running_task_failed_kills_it_and_it_stays_failed(
        stack: Any, allowed: Any, alive: Any) -> None:
    stack.load(DAGS)
    stack.new_run("sleepy")
    stack.start()
    stack.wait_state("sleepy", "sleeper", "running")
    pid = _pid(stack, "sleeper-1.pid")
    mark_task_instances(stack.engine, "r1", "sleeper", TI.FAILED, now=utcnow())
    stack.wait(lambda: not alive(pid), why="the try killed")
    run = stack.wait_run("sleepy", "failed")
    tis = stack.tis("sleepy")
    assert (tis["sleeper"].state, tis["after"].state) == ("failed", "upstream_failed")
    assert run.state == "failed"
    allowed(stack.history("sleepy"))
    stack.wait(lambda: stack.mark("dag-failed-r1").exists(), why="the DAG failure callback")


def test_cancel_while_tasks_run_are_deferred_and_await_retry(
        stack: Any, allowed: Any, alive: Any) -> None:
    stack.load(DAGS)
    stack.new_run("mixed")
    now = utcnow()
    tis = stack.tis("mixed")
    with transaction(stack.engine) as conn:  # a deferred and an awaiting-retry task instance
        trigger_id = conn.execute(insert(trigger).values(
            classpath="statewright.sdk.triggers.temporal.TimeDeltaTrigger", kwargs="x",
            created_date=now).returning(trigger.c.id)).scalar_one()
        for tid, last, actor, values in (
                ("waiter", TI.DEFERRED, Actor.WORKER,
                 {"trigger_id": trigger_id, "next_method": "execute_complete"}),
                ("retrier", TI.UP_FOR_RETRY, Actor.WORKER,
                 {"next_retry_at": now + timedelta(hours=1)})):
            state = TI.NONE
            for to in (TI.SCHEDULED, TI.QUEUED, TI.RUNNING, last):
                door.set_task_instance_state(
                    conn, tis[tid].id, frm=state, to=to, actor=actor, now=now,
                    increment_try=to is TI.RUNNING, values=values if to is last else None)
                state = to
    stack.start()
    stack.wait_state("mixed", "sleeper", "running")
    pid = _pid(stack, "mixed-sleeper.pid")

    cancel_run(stack.engine, "r1", now=utcnow())
    assert stack.run("mixed").state == "cancelled"
    sleeper = stack.wait_state("mixed", "sleeper", "failed")
    assert sleeper.state_name == "Cancelled" and not alive(pid)
    got = {t: (ti.state, ti.state_name) for t, ti in stack.tis("mixed").items()}
    assert got == {"sleeper": ("failed", "Cancelled"), "waiter": ("skipped", "Cancelled"),
                   "retrier": ("skipped", "Cancelled")}
    assert stack.ti("mixed", "waiter").trigger_id is None
    rows = stack.history("mixed")
    allowed(rows)
    assert [(r.from_state, r.to_state, r.name, r.actor) for r in rows
            if r.task_id == "sleeper" and r.from_state != r.to_state][-2:] == [
        ("running", "shutdown", "Cancelling", "user"),
        ("shutdown", "failed", "Cancelled", "worker")]
    # the try is dead, so no hook of it can fire later; none fired before
    assert not list(stack.folder.glob("failure-callback-*"))
    assert not list(stack.folder.glob("dag-*"))
    with stack.engine.connect() as conn:
        assert outbox.for_run(conn, stack.run("mixed").id) == []


def test_a_try_that_ignores_sigterm_is_killed_after_the_grace_period(
        stack: Any, alive: Any) -> None:
    stack.load(DAGS)
    stack.new_run("stubborn")
    stack.start()
    stack.wait_state("stubborn", "ignores_sigterm", "running")
    pid = _pid(stack, "stubborn.pid")
    time.sleep(0.2)  # let it install its SIGTERM handler
    cancel_run(stack.engine, "r1", now=utcnow())
    ti = stack.wait_state("stubborn", "ignores_sigterm", "failed", timeout=30)
    assert ti.state_name == "Cancelled" and not alive(pid)
    assert not stack.mark("failure-callback-ignores_sigterm-1").exists()


def test_pause_mid_flight_then_resume(stack: Any, allowed: Any) -> None:
    stack.load(DAGS)
    stack.new_run("paced")
    stack.start()
    stack.wait(stack.mark("slow-started").exists, why="slow started")
    pause_run(stack.engine, "r1", now=utcnow())
    stack.mark("slow-may-finish").write_text("")
    stack.wait_state("paced", "slow", "success")  # the running try finishes
    loops = stack.loops
    stack.wait(lambda: stack.loops >= loops + 5, why="five scheduler loops")
    assert {t: ti.state for t, ti in stack.tis("paced").items()} == {
        "slow": "success", "b": "none", "c": "none"}
    assert stack.run("paced").state == "paused" and not stack.mark("b-ran").exists()
    resume_run(stack.engine, "r1", now=utcnow())
    stack.wait_run("paced", "success")
    allowed(stack.history("paced"))
    stack.wait(lambda: stack.mark("dag-success-r1").exists(), why="the DAG success callback")

    def recorded() -> bool:  # a new connection each time: one read transaction keeps its snapshot
        with stack.engine.connect() as conn:
            return [c.status for c in outbox.for_run(conn, stack.run("paced").id)] == ["done"]

    stack.wait(recorded, why="the callback recorded")


def test_cached_through_the_task_process_pipe_and_crashed(stack: Any) -> None:
    stack.load(DAGS)
    stack.new_run("cache_and_crash", "r1")
    stack.start()
    stack.wait_run("cache_and_crash", "failed", run_id="r1")
    stack.new_run("cache_and_crash", "r2")
    stack.wait_run("cache_and_crash", "failed", run_id="r2")
    first, second = (stack.tis("cache_and_crash", r) for r in ("r1", "r2"))
    assert (first["cached"].state, first["cached"].state_name) == ("success", "Success")
    assert (second["cached"].state, second["cached"].state_name) == ("success", "Cached")
    assert stack.mark("cached-calls").read_text() == "x"  # ran once
    assert (second["crashes"].state, second["crashes"].state_name) == ("failed", "Crashed")
    assert stack.run("cache_and_crash", "r2").state == RUN.FAILED.value
