"""SIGTERM to each service, as real processes on SQLite and PostgreSQL: what it held is handed
back and recorded — running tries end Interrupted (up_for_retry or failed) through the state
door, the scheduler's and triggerer's job rows end, triggers are released."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from statewright.crypto import generate_key
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.db.tables import job, trigger

DAGS = textwrap.dedent('''
    import os, signal, time
    from datetime import timedelta
    from pathlib import Path
    from statewright.sdk import DAG, BaseOperator, task
    from statewright.sdk.triggers import TimeDeltaTrigger

    MARKS = Path(os.environ["STATEWRIGHT_HOME"]).parent / "marks"

    QUEUE = os.environ.get("OPS_QUEUE", "default")

    with DAG("ops_long", schedule=None) as dag:
        @task(retries=1, retry_delay=timedelta(hours=1), queue=QUEUE)
        def patient():
            MARKS.mkdir(exist_ok=True)
            (MARKS / "patient-started").write_text("started")
            try:
                time.sleep(600)
            finally:  # runs: the try is asked to stop, not killed outright
                MARKS.mkdir(exist_ok=True)
                (MARKS / "patient").write_text("cleaned up")

        @task(queue=QUEUE)
        def stubborn():
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # ignores the request: killed later
            MARKS.mkdir(exist_ok=True)
            (MARKS / "stubborn").write_text("deaf")
            time.sleep(600)

        patient()
        stubborn()

    class Wait(BaseOperator):
        def execute(self, context):
            self.defer(trigger=TimeDeltaTrigger(timedelta(hours=1)), method_name="done")

        def done(self, context, event=None):
            return "late"

    with DAG("ops_deferred", schedule=None) as deferred:
        Wait(task_id="wait")

    with DAG("ops_peer", schedule=None) as peer:
        @task(retries=1, retry_delay=timedelta(seconds=0))
        def handed_over(**context):
            if context["ti"].try_number == 1:
                MARKS.mkdir(exist_ok=True)
                (MARKS / "handed_over").write_text("started")
                time.sleep(600)
            return "done by a peer"

        handed_over()
''')

STATEWRIGHT = [sys.executable, "-m", "statewright.cli.main"]


@pytest.fixture
def env(engine: Engine, tmp_path: Path) -> dict[str, str]:
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "ops_shutdown.py").write_text(DAGS)
    return {**os.environ, "STATEWRIGHT_HOME": str(tmp_path / "home"),
            "STATEWRIGHT_DAGS_FOLDER": str(tmp_path / "dags"),
            "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False),
            "STATEWRIGHT_FERNET_KEY": generate_key(), "STATEWRIGHT_SHUTDOWN_GRACE_SECONDS": "3",
            "STATEWRIGHT_SCHEDULER_IDLE_SECONDS": "0.5", "STATEWRIGHT_API_PORT": str(_port())}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def cli(cli_run: Callable[..., Any]) -> Callable[..., None]:
    """The setup commands (``dags trigger``) run in this process: the services are the point."""
    def run(env: dict[str, str], *args: str) -> None:
        res = cli_run(env, *args)
        assert res.exit_code == 0, res.output

    return run


@contextmanager
def _service(env: dict[str, str], log: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as out:
        proc = subprocess.Popen([*STATEWRIGHT, *args], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def _until(pred: Callable[[], bool], timeout: float, what: str, log: Path) -> None:
    """Wait on database state (polled), failing with the service's log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}:\n{log.read_text()[-3000:]}")


def _ti(engine: Engine, dag_id: str, task_id: str) -> object:
    with engine.connect() as conn:
        run = run_repo.get_by_run_id(conn, dag_id, "r1")
        return ti_repo.get_by_key(conn, run.id, task_id) if run is not None else None


def _state(engine: Engine, dag_id: str, task_id: str) -> str | None:
    t = _ti(engine, dag_id, task_id)
    return None if t is None else str(t.state)  # type: ignore[attr-defined]


def _sigterm(proc: subprocess.Popen[bytes], timeout: float = 60) -> int:
    """SIGTERM to the whole process group (as systemd or a container stop sends it)."""
    os.killpg(proc.pid, signal.SIGTERM)
    return proc.wait(timeout)


def _jobs(engine: Engine, job_type: str) -> list[tuple[str, bool]]:
    with engine.connect() as conn:
        return [(r.status, r.end_date is not None) for r in conn.execute(
            select(job.c.status, job.c.end_date).where(job.c.job_type == job_type))]


def _assert_interrupted(engine: Engine, dag_id: str, task_id: str, state: str,
                        message: str) -> None:
    t = _ti(engine, dag_id, task_id)
    assert (t.state, t.state_name) == (state, "Interrupted"), t.state_message  # type: ignore[attr-defined]
    with engine.connect() as conn:
        rows = transitions_log.for_task_instance(conn, t.id)  # type: ignore[attr-defined]
    last = rows[-1]
    assert (last.from_state, last.to_state, last.name, last.actor) == (
        "running", state, "Interrupted", "worker")
    assert message in (last.message or "")


@pytest.mark.timeout(240)
# The scheduler's main process alone takes the same path to the database as the whole group:
# that variant runs on SQLite only.
@pytest.mark.parametrize(("engine", "group"), [("sqlite", True), ("postgres", True),
                                               ("sqlite", False)],
                         ids=["sqlite-process-group", "postgres-process-group",
                              "sqlite-main-process"], indirect=["engine"])
def test_scheduler_sigterm_interrupts_its_running_tries(env: dict[str, str], engine: Engine,
                                                       tmp_path: Path, group: bool,
                                                       cli: Callable[..., None]) -> None:
    cli(env, "dags", "trigger", "ops_long", "--run-id", "r1")
    log = tmp_path / "scheduler.log"
    with _service(env, log, "scheduler") as proc:
        _until(lambda: (tmp_path / "marks" / "patient-started").exists()
               and (tmp_path / "marks" / "stubborn").exists(), 90, "both tries", log)
        if group:  # systemd, a container stop: every process of the service gets it
            assert _sigterm(proc) == 0, log.read_text()[-3000:]
        else:  # the scheduler's process alone: it asks its executor to stop the tries
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(60) == 0, log.read_text()[-3000:]
    # asked to stop: its finally ran, it ends up_for_retry (a retry is left)
    _assert_interrupted(engine, "ops_long", "patient", "up_for_retry", "TaskInterrupted")
    # ignored the request: killed once the grace period (3 s) passed; no retry left
    _assert_interrupted(engine, "ops_long", "stubborn", "failed", "grace period of 3 s")
    assert _jobs(engine, "scheduler") == [("stopped", True)]
    assert (tmp_path / "marks" / "patient").read_text() == "cleaned up"


@pytest.mark.timeout(240)
def test_standalone_sigterm_hands_back_tries_and_triggers(env: dict[str, str], engine: Engine,
                                                          tmp_path: Path,
                                                          cli: Callable[..., None]) -> None:
    cli(env, "dags", "trigger", "ops_long", "--run-id", "r1")
    cli(env, "dags", "trigger", "ops_deferred", "--run-id", "r1")
    log = tmp_path / "standalone.log"
    with _service(env, log, "standalone") as proc:
        def held() -> bool:
            with engine.connect() as conn:
                claimed = conn.execute(select(trigger.c.triggerer_id)).scalars().all()
            return ((tmp_path / "marks" / "patient-started").exists()
                    and claimed != [] and None not in claimed)

        _until(held, 120, "a running try and a claimed trigger", log)
        assert _sigterm(proc) == 0, log.read_text()[-3000:]
    _assert_interrupted(engine, "ops_long", "patient", "up_for_retry", "TaskInterrupted")
    assert _state(engine, "ops_deferred", "wait") == "deferred"  # the wait itself goes on
    with engine.connect() as conn:
        assert conn.execute(select(trigger.c.triggerer_id)).scalars().all() == [None]
    assert _jobs(engine, "scheduler") == [("stopped", True)]
    assert _jobs(engine, "triggerer") == [("stopped", True)]


@pytest.mark.timeout(180)
# On PostgreSQL the standalone test above stops a triggerer (and checks its triggers released).
@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_triggerer_sigterm_releases_its_triggers(env: dict[str, str], engine: Engine,
                                                 tmp_path: Path, cli: Callable[..., None]) -> None:
    cli(env, "dags", "trigger", "ops_deferred", "--run-id", "r1")
    log = tmp_path / "services.log"
    with _service(env, log, "scheduler") as scheduler, \
            _service(env, log, "triggerer") as triggerer:
        def claimed() -> bool:
            with engine.connect() as conn:
                return conn.execute(select(trigger.c.triggerer_id)).scalars().all() not in (
                    [], [None])

        _until(claimed, 120, "the trigger to be claimed", log)
        assert _sigterm(triggerer) == 0, log.read_text()[-3000:]
        assert _sigterm(scheduler) == 0
    with engine.connect() as conn:
        assert conn.execute(select(trigger.c.triggerer_id)).scalars().all() == [None]
    assert _jobs(engine, "triggerer") == [("stopped", True)]
    assert _state(engine, "ops_deferred", "wait") == "deferred"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("args", [("api-server",), ("dag-processor",)])
@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)  # they hold nothing to hand back
def test_api_server_and_dag_processor_stop_on_sigterm(env: dict[str, str], engine: Engine,
                                                      tmp_path: Path,
                                                      args: tuple[str, ...]) -> None:
    log = tmp_path / "service.log"
    with _service(env, log, *args) as proc:
        # uvicorn's own line: its signal handlers are in place (its banner comes before them)
        marker = ("Started server process" if args[0] == "api-server"
                  else "DAG processor reading")
        _until(lambda: marker in log.read_text(), 60, "the service to start", log)
        code = _sigterm(proc, 30)
    if args[0] == "api-server":  # uvicorn finishes its requests, then re-raises the signal
        assert code in (0, -signal.SIGTERM) and "Finished server process" in log.read_text()
    else:
        assert code == 0 and "DAG processor stopped" in log.read_text(), log.read_text()[-3000:]


REDIS = os.environ.get("STATEWRIGHT_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def _redis_or_skip() -> None:
    from kombu import Connection

    try:
        with Connection(REDIS, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=1)
    except Exception as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis at {REDIS} is unreachable: {exc}")
        pytest.skip(f"Redis at {REDIS} is unreachable: {exc}")


@pytest.mark.timeout(240)
# The worker's tries report through the same door as the scheduler's (tested on both above).
@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_celery_worker_warm_shutdown_interrupts_its_tries(env: dict[str, str], engine: Engine,
                                                          tmp_path: Path,
                                                          cli: Callable[..., None]) -> None:
    _redis_or_skip()
    queue = f"ops_shutdown_{uuid.uuid4().hex[:10]}"
    env = {**env, "OPS_QUEUE": queue, "STATEWRIGHT_EXECUTOR": "celery",
           "STATEWRIGHT_CELERY_BROKER_URL": REDIS}
    cli(env, "dags", "trigger", "ops_long", "--run-id", "r1")
    log = tmp_path / "services.log"
    with _service(env, log, "scheduler") as scheduler, \
            _service(env, log, "celery-worker", "--queues", queue, "-c", "2") as worker:
        _until(lambda: (tmp_path / "marks" / "patient-started").exists()
               and (tmp_path / "marks" / "stubborn").exists(), 120, "both tries", log)
        os.kill(worker.pid, signal.SIGTERM)  # the worker alone: Celery's warm shutdown
        assert worker.wait(60) == 0, log.read_text()[-3000:]
        assert _sigterm(scheduler) == 0
    assert (tmp_path / "marks" / "patient").read_text() == "cleaned up"
    _assert_interrupted(engine, "ops_long", "patient", "up_for_retry", "TaskInterrupted")
    _assert_interrupted(engine, "ops_long", "stubborn", "failed", "grace period of 3 s")


@pytest.fixture
def pg_env(pg_engine: Engine, tmp_path: Path) -> dict[str, str]:
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "ops_shutdown.py").write_text(DAGS)
    return {**os.environ, "STATEWRIGHT_HOME": str(tmp_path / "home"),
            "STATEWRIGHT_DAGS_FOLDER": str(tmp_path / "dags"),
            "STATEWRIGHT_DATABASE_URL": pg_engine.url.render_as_string(hide_password=False),
            "STATEWRIGHT_FERNET_KEY": generate_key(), "STATEWRIGHT_SHUTDOWN_GRACE_SECONDS": "3",
            "STATEWRIGHT_SCHEDULER_IDLE_SECONDS": "0.5"}


@pytest.mark.timeout(240)
def test_a_surviving_scheduler_retries_what_a_stopped_one_handed_back(
        pg_env: dict[str, str], pg_engine: Engine, tmp_path: Path,
        cli: Callable[..., None]) -> None:
    engine = pg_engine
    cli(pg_env, "dags", "trigger", "ops_peer", "--run-id", "r1")
    log = tmp_path / "schedulers.log"
    with _service(pg_env, log, "scheduler") as one, _service(pg_env, log, "scheduler") as two:
        _until(lambda: (tmp_path / "marks" / "handed_over").exists(), 120, "the first try",
               log)
        holder = int(str(_ti(engine, "ops_peer", "handed_over").executor)  # type: ignore[attr-defined]
                     .rsplit(":", 1)[1])
        stopped, survivor = (one, two) if holder == one.pid else (two, one)
        assert holder == stopped.pid
        assert _sigterm(stopped) == 0, log.read_text()[-3000:]
        _until(lambda: _state(engine, "ops_peer", "handed_over") == "success", 120,
               "the survivor to run the retry", log)
        assert survivor.poll() is None
    t = _ti(engine, "ops_peer", "handed_over")
    assert t.try_number == 2  # type: ignore[attr-defined]
    with engine.connect() as conn:
        edges = [(h.from_state, h.to_state, h.name, h.try_number)
                 for h in transitions_log.for_task_instance(conn, t.id)]  # type: ignore[attr-defined]
    assert ("running", "up_for_retry", "Interrupted", 1) in edges
    assert edges[-1][1:] == ("success", "Success", 2)
