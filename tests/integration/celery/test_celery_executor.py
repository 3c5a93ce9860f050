"""The Celery executor with real brokers (Redis, RabbitMQ), real ``statewright celery-worker``
processes and the real scheduler, on SQLite and PostgreSQL: outcomes, history, duplicates, and a
worker killed with -9 mid-try.

The brokers are 127.0.0.1:6379 (Redis) and 127.0.0.1:5672 (RabbitMQ, guest/guest);
``STATEWRIGHT_TEST_REDIS_URL`` and ``STATEWRIGHT_TEST_RABBITMQ_URL`` override them. An
unreachable broker skips its tests, except under ``CI=true`` where it fails them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from kombu import Connection
from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.crypto import generate_key
from statewright.db.engine import transaction
from statewright.db.repositories import dispatch as dispatch_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.celery import CeleryExecutor, celery_queue
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig
from statewright.services.worker.task_runner import HOSTNAME

BROKERS = {
    "redis": os.environ.get("STATEWRIGHT_TEST_REDIS_URL", "redis://127.0.0.1:6379/15"),
    "rabbitmq": os.environ.get("STATEWRIGHT_TEST_RABBITMQ_URL",
                               "amqp://guest:guest@127.0.0.1:5672//"),
}
STATEWRIGHT = [sys.executable, "-m", "statewright.cli.main"]
DROPPED = "dropped the message for task instance"
FERNET_KEY = generate_key()

# Each try appends "task_id try_number" to the file MARKS: a try that ran twice shows twice.
MARK = '''
def mark(context):
    with open(MARKS, "a") as fh:
        fh.write(f"{context['ti'].task_id} {context['ti'].try_number}\\n")
'''

OUTCOMES = '''
import os, time
from datetime import timedelta
from statewright.sdk import DAG, task
MARK_FUNCTION

with DAG("celery_outcomes"):
    @task(queue=QUEUE)
    def ok(**context):
        mark(context)
        return {"answer": 42}

    @task(queue=QUEUE)
    def uses(value, **context):
        mark(context)
        return value["answer"] + 1

    @task(queue=QUEUE, retries=1, retry_delay=timedelta(seconds=0))
    def flaky(**context):
        mark(context)
        if context["ti"].try_number == 1:
            raise ConnectionError("first try fails")
        return "second"

    @task(queue=QUEUE)
    def exits(**context):
        mark(context)
        os._exit(3)

    @task(queue=QUEUE)
    def slow(**context):
        mark(context)
        time.sleep(1.5)
        return "slow"

    @task(queue=QUEUE, execution_timeout=timedelta(seconds=0.5))
    def too_slow(**context):
        mark(context)
        time.sleep(30)

    uses(ok()); flaky(); exits(); slow(); too_slow()
'''

KILLED = '''
import time
from datetime import timedelta
from statewright.sdk import DAG, task
MARK_FUNCTION

with DAG("celery_killed"):
    @task(queue=QUEUE, retries=1, retry_delay=timedelta(seconds=0))
    def long(**context):
        mark(context)
        if context["ti"].try_number == 1:
            time.sleep(60)
        return "done"

    long()
'''


def _reachable(url: str) -> None:
    try:
        with Connection(url, connect_timeout=3) as conn:
            conn.ensure_connection(max_retries=1)
    except Exception as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the Celery broker {url} is required under CI=true and is "
                        f"unreachable: {exc}")
        pytest.skip(f"Celery broker {url} unreachable: {exc}")


@pytest.fixture(params=sorted(BROKERS))
def broker_url(request: pytest.FixtureRequest) -> str:
    url = BROKERS[request.param]
    _reachable(url)
    return url


@dataclass
class Deployment:
    """A DAGs folder, a scheduler with the Celery executor (in this process) and workers."""

    engine: Engine
    broker_url: str
    tmp: Path
    queue: str
    executor: CeleryExecutor
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    killed: set[int] = field(default_factory=set)
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def worker_log(self, n: int) -> Path:
        return self.tmp / f"worker{n}.log"

    def start_worker(self, **env: str) -> subprocess.Popen[bytes]:
        n = len(self.workers)
        full_env = {
            **os.environ,
            "STATEWRIGHT_HOME": str(self.tmp / "home"),
            "STATEWRIGHT_DAGS_FOLDER": str(self.tmp / "dags"),
            "STATEWRIGHT_LOGS_FOLDER": str(self.tmp / "logs"),
            "STATEWRIGHT_DATABASE_URL": self.engine.url.render_as_string(hide_password=False),
            "STATEWRIGHT_CELERY_BROKER_URL": self.broker_url,
            "STATEWRIGHT_HEARTBEAT_SECONDS": "0.5",
            "COLUMNS": "1000",  # one log record per line
            "STATEWRIGHT_FERNET_KEY": FERNET_KEY,  # required with PostgreSQL
            **env,
        }
        with self.worker_log(n).open("wb") as out:
            proc = subprocess.Popen(
                [*STATEWRIGHT, "celery-worker", "--queues", self.queue, "--concurrency", "3",
                 "--name", f"w{n}-{self.queue}@{HOSTNAME}"],
                env=full_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.workers.append(proc)
        return proc

    def tries_run(self) -> list[str]:
        """"task_id try" of every try that ran, sorted."""
        path = self.tmp / "marks"
        return sorted(path.read_text().splitlines()) if path.exists() else []

    def dropped(self, n: int) -> int:
        return self.worker_log(n).read_text(errors="replace").count(DROPPED)

    def logs(self) -> str:
        return "\n".join(f"--- worker {i}\n" + self.worker_log(i).read_text(errors="replace")
                         [-4000:] for i in range(len(self.workers)))


def _deploy(engine: Engine, broker_url: str, tmp_path: Path, dag: str) -> Iterator[Deployment]:
    queue = f"sw_test_{uuid.uuid4().hex[:10]}"
    (tmp_path / "dags").mkdir()
    text = textwrap.dedent(dag).replace("MARK_FUNCTION", MARK)
    text = text.replace("QUEUE", repr(queue)).replace("MARKS", repr(str(tmp_path / "marks")))
    (tmp_path / "dags" / "dag.py").write_text(text)
    DagProcessor(engine, tmp_path / "dags").run_once()
    views = DagViewCache()
    executor = CeleryExecutor(engine, broker_url=broker_url, parallelism=8)
    # A try is a zombie after 10 s without a heartbeat (every 0.5 s): a live worker that a
    # loaded machine holds up for a few seconds is not reaped.
    scheduler = Scheduler(engine, executor, views=views, config=SchedulerConfig(
        idle_seconds=0.2, zombie_threshold=timedelta(seconds=10),
        housekeeping_every=timedelta(seconds=0.5)))
    d = Deployment(engine, broker_url, tmp_path, queue, executor)
    d.thread = threading.Thread(target=scheduler.run_forever, args=(d.stop,), daemon=True)
    d.thread.start()
    try:
        yield d
    finally:
        d.stop.set()
        d.thread.join(10)
        for w in d.workers:
            if w.poll() is None:
                w.send_signal(signal.SIGTERM)
        for w in d.workers:
            try:
                w.wait(15)
            except subprocess.TimeoutExpired:
                pass
            with contextlib.suppress(ProcessLookupError):  # whatever is left of its session
                os.killpg(w.pid, signal.SIGKILL)
            w.wait(5)
        executor.stop()
        _delete_queue(broker_url, queue)


def _delete_queue(url: str, name: str) -> None:
    q = celery_queue(name)
    try:
        with Connection(url, connect_timeout=3) as conn:
            channel = conn.channel()
            q(channel).delete()
            q.exchange(channel).delete()
            if url.startswith("redis"):  # the transport's routing table of the exchange
                client = channel.client
                client.delete(f"_kombu.binding.{name}", f"_kombu.binding_permanent.{name}")
                client.zrem("_kombu.binding_deadlines", name)
    except Exception:
        pass


@pytest.fixture
def outcomes(engine: Engine, broker_url: str, tmp_path: Path) -> Iterator[Deployment]:
    yield from _deploy(engine, broker_url, tmp_path, OUTCOMES)


@pytest.fixture
def killed(engine: Engine, broker_url: str, tmp_path: Path) -> Iterator[Deployment]:
    yield from _deploy(engine, broker_url, tmp_path, KILLED)


# A wait ends as soon as what it waits for happens; its bound only ends one that never would, and
# a loaded machine may take many seconds to start a worker process or deliver a message.
WAIT_S = 120.0


def _wait(pred: Callable[[], bool], timeout: float, what: str, d: Deployment) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        gone = [i for i, w in enumerate(d.workers) if i not in d.killed and w.poll() is not None]
        if gone:
            raise AssertionError(f"worker {gone[0]} exited while waiting for {what}\n{d.logs()}")
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}\n{d.logs()}")


def _trigger(engine: Engine, dag_id: str) -> str:
    with transaction(engine) as conn:
        return trigger_dag(conn, dag_id, now=utcnow(), actor=Actor.USER)[1]


def _run(engine: Engine, dag_id: str, run_id: str) -> Any:
    with engine.connect() as conn:
        return run_repo.get_by_run_id(conn, dag_id, run_id)


def _tis(engine: Engine, run_pk: int) -> dict[str, Any]:
    with engine.connect() as conn:
        return {t.task_id: t for t in ti_repo.by_run(conn, run_pk)}


def _edges(engine: Engine, ti_id: int) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        return [(h.from_state, h.to_state, h.actor, h.try_number)
                for h in transitions_log.for_task_instance(conn, ti_id)]


def _starts(engine: Engine, ti_id: int) -> int:
    return sum(1 for e in _edges(engine, ti_id) if e[:2] == ("queued", "running"))


@dataclass
class _Stale:
    """A message as the executor sent it: the task instance and the try it was queued at."""

    id: int
    try_number: int
    queue: str
    dag_id: str = "celery_outcomes"
    run_id: str = "stale"
    task_id: str = "stale"


# The broker's path (kombu) and the database's (the door) do not meet: each broker and each
# database once, not every pair of them.
EACH_ONCE = pytest.mark.parametrize(("engine", "broker_url"),
                                    [("sqlite", "redis"), ("postgres", "rabbitmq")],
                                    indirect=True, ids=["sqlite-redis", "postgres-rabbitmq"])


@EACH_ONCE
def test_a_dag_runs_on_a_celery_worker_and_duplicates_start_nothing(
        outcomes: Deployment) -> None:
    d = outcomes
    d.start_worker()
    run_id = _trigger(d.engine, "celery_outcomes")
    run_pk = _run(d.engine, "celery_outcomes", run_id).id

    # While `slow` runs, its message arrives a second time: the fenced start drops it.
    def slow_running() -> bool:
        slow = _tis(d.engine, run_pk).get("slow")
        return slow is not None and slow.state == "running"

    _wait(slow_running, WAIT_S, "slow to run", d)
    slow = _tis(d.engine, run_pk)["slow"]
    assert d.executor.send([_Stale(slow.id, 0, d.queue)]) == []
    _wait(lambda: d.dropped(0) >= 1, WAIT_S, "the duplicate to be dropped", d)

    _wait(lambda: _run(d.engine, "celery_outcomes", run_id).state in ("success", "failed"),
          WAIT_S, "the run to finish", d)
    run = _run(d.engine, "celery_outcomes", run_id)
    tis = _tis(d.engine, run_pk)
    got = {t: (ti.state, ti.state_name, ti.try_number) for t, ti in tis.items()}
    assert got == {
        "ok": ("success", "Success", 1),
        "uses": ("success", "Success", 1),
        "flaky": ("success", "Success", 2),
        "exits": ("failed", "Crashed", 1),
        "slow": ("success", "Success", 1),
        "too_slow": ("failed", "TimedOut", 1),
    }, d.logs()
    assert run.state == "failed"
    assert "exit code 3" in tis["exits"].state_message
    assert {ti.executor for ti in tis.values()} == {"celery"}
    assert {ti.hostname for ti in tis.values()} == {HOSTNAME}
    assert tis["slow"].last_heartbeat_at > tis["slow"].start_date  # heartbeats while it ran
    with d.engine.connect() as conn:
        history = [(h.try_number, h.state) for h in ti_repo.history_of(conn, tis["flaky"].id)]
    assert history == [(1, "up_for_retry"), (2, "success")]

    # Actors: the scheduler queues, the worker starts and ends each try.
    flaky = _edges(d.engine, tis["flaky"].id)
    assert flaky[1:] == [
        ("none", "scheduled", "scheduler", 0),
        ("scheduled", "queued", "scheduler", 0),
        ("queued", "running", "worker", 1),
        ("running", "up_for_retry", "worker", 1),
        ("up_for_retry", "scheduled", "scheduler", 1),
        ("scheduled", "queued", "scheduler", 1),
        ("queued", "running", "worker", 2),
        ("running", "success", "worker", 2),
    ]
    assert ("running", "failed", "worker", 1) in _edges(d.engine, tis["exits"].id)

    # Every message again, as a broker redelivering them would: none starts a try.
    stale = [_Stale(ti.id, 0, d.queue) for ti in tis.values()] + [
        _Stale(tis["flaky"].id, 1, d.queue)]
    before = d.dropped(0)
    assert d.executor.send(stale) == []
    _wait(lambda: d.dropped(0) >= before + len(stale), WAIT_S, "the stale messages to drop", d)
    after = _tis(d.engine, run_pk)
    assert {t: (ti.state, ti.try_number) for t, ti in after.items()} == {
        t: (ti.state, ti.try_number) for t, ti in tis.items()}
    starts = {t: _starts(d.engine, ti.id) for t, ti in after.items()}
    assert starts == {"ok": 1, "uses": 1, "flaky": 2, "exits": 1, "slow": 1, "too_slow": 1}
    assert d.tries_run() == ["exits 1", "flaky 1", "flaky 2", "ok 1", "slow 1", "too_slow 1",
                             "uses 1"]
    with d.engine.connect() as conn:
        assert dispatch_repo.in_flight(conn, "celery") == 0
    assert d.executor.slots_available() == 8


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_a_worker_killed_mid_try_leaves_a_zombie_the_scheduler_ends_and_no_try_runs_twice(
        killed: Deployment) -> None:
    d = killed
    # A short visibility timeout lets a Redis worker take back the killed worker's message.
    first = d.start_worker(STATEWRIGHT_CELERY_VISIBILITY_TIMEOUT="1")
    run_id = _trigger(d.engine, "celery_killed")
    run_pk = _run(d.engine, "celery_killed", run_id).id

    def long() -> Any:
        return _tis(d.engine, run_pk)["long"]

    _wait(lambda: d.tries_run() == ["long 1"], WAIT_S, "the first try to run", d)
    task_pid = long().pid
    os.kill(first.pid, signal.SIGKILL)  # the worker only: its task process must not outlive it
    d.killed.add(0)
    first.wait(5)
    _wait(lambda: not _pid_alive(task_pid), WAIT_S, "the task process to die with its worker", d)

    # No heartbeat any more: the scheduler's reaper ends the try Crashed.
    _wait(lambda: long().try_number == 1 and long().state != "running", WAIT_S,
          "the zombie to be reaped", d)
    d.start_worker(STATEWRIGHT_CELERY_VISIBILITY_TIMEOUT="1")
    _wait(lambda: _run(d.engine, "celery_killed", run_id).state in ("success", "failed"), WAIT_S,
          "the run to finish", d)
    # The killed worker's message, delivered again, was dropped: try 1 had started.
    _wait(lambda: d.dropped(1) >= 1, WAIT_S, "the redelivered message to be dropped", d)

    ti = long()
    assert _run(d.engine, "celery_killed", run_id).state == "success", d.logs()
    assert (ti.state, ti.try_number) == ("success", 2)
    edges = _edges(d.engine, ti.id)
    assert ("running", "up_for_retry", "scheduler", 1) in edges
    assert [e for e in edges if e[:2] == ("queued", "running")] == [
        ("queued", "running", "worker", 1), ("queued", "running", "worker", 2)]
    with d.engine.connect() as conn:
        crashed = [h for h in transitions_log.for_task_instance(conn, ti.id)
                   if h.to_state == "up_for_retry"]
        history = [(h.try_number, h.state) for h in ti_repo.history_of(conn, ti.id)]
    assert [h.name for h in crashed] == ["Crashed"]
    assert "zombie" in (crashed[0].message or "")
    assert history[-1] == (2, "success")
    assert d.tries_run() == ["long 1", "long 2"]


AIRFLOW_FILE = '''
from datetime import timedelta
from airflow.sdk import DAG, task
from airflow.providers.standard.operators.bash import BashOperator
MARK_FUNCTION

with DAG("celery_from_airflow", schedule=None):
    @task(queue=QUEUE)
    def which_run(**context):
        mark(context)
        from airflow.sdk import get_current_context  # imported while the task runs
        return get_current_context()["run_id"]

    which_run() >> BashOperator(task_id="echo", bash_command="echo hi", queue=QUEUE)
'''


@pytest.fixture
def from_airflow(engine: Engine, broker_url: str, tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch) -> Iterator[Deployment]:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")  # the DAG processor's imports
    yield from _deploy(engine, broker_url, tmp_path, AIRFLOW_FILE)


@pytest.mark.parametrize(("engine", "broker_url"), [("sqlite", "rabbitmq")], indirect=True)
def test_an_unedited_airflow_file_runs_on_a_celery_worker(from_airflow: Deployment) -> None:
    d = from_airflow
    d.start_worker(STATEWRIGHT_AIRFLOW_COMPAT="true")
    run_id = _trigger(d.engine, "celery_from_airflow")
    _wait(lambda: _run(d.engine, "celery_from_airflow", run_id).state in ("success", "failed"),
          WAIT_S, "the run to finish", d)
    run = _run(d.engine, "celery_from_airflow", run_id)
    assert {t: ti.state for t, ti in _tis(d.engine, run.id).items()} == {
        "which_run": "success", "echo": "success"}, d.logs()
    assert run.state == "success" and d.tries_run() == ["which_run 1"]
