"""kill -9 of the whole embedded deployment mid-run, then a restart: the run converges."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log

DAG = textwrap.dedent('''
    import time
    from datetime import timedelta
    from statewright.sdk import DAG, task

    with DAG("chaos") as dag:
        @task(retries=1, retry_delay=timedelta(seconds=0))
        def slow(**context):
            if context["ti"].try_number == 1:
                time.sleep(60)
            return "done"

        @task
        def after(x):
            return x + "!"

        after(slow())
''')

STATEWRIGHT = [sys.executable, "-m", "statewright.cli.main"]


def _start(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen([*STATEWRIGHT, "standalone"], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


def _wait(pred, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
def test_kill_9_mid_run_then_restart_converges(tmp_path: Path) -> None:
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "chaos.py").write_text(DAG)
    env = {**os.environ, "STATEWRIGHT_HOME": str(tmp_path / "home"),
           "STATEWRIGHT_DAGS_FOLDER": str(tmp_path / "dags"), "STATEWRIGHT_DATABASE_URL": ""}
    env.pop("STATEWRIGHT_DATABASE_URL")
    subprocess.run([*STATEWRIGHT, "dags", "trigger", "chaos", "--run-id", "r1"], env=env,
                   check=True, capture_output=True)
    engine = create_engine(f"sqlite:///{tmp_path / 'home' / 'statewright.db'}")

    def state_of(task_id: str) -> str:
        with engine.connect() as conn:
            run = run_repo.get_by_run_id(conn, "chaos", "r1")
            return str(ti_repo.get_by_key(conn, run.id, task_id).state)

    log = tmp_path / "standalone.log"
    first = _start(env, log)
    try:
        _wait(lambda: state_of("slow") == "running", 60, "the first try to run")
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
    assert state_of("slow") == "running"  # the database still says so: nobody is left to report

    second = _start(env, log)
    try:
        def finished() -> bool:
            with engine.connect() as conn:
                return run_repo.get_by_run_id(conn, "chaos", "r1").state in ("success", "failed")

        _wait(finished, 90, "the run to finish after the restart")
    finally:
        second.send_signal(signal.SIGTERM)
        try:
            second.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(second.pid, signal.SIGKILL)
    with engine.connect() as conn:
        run = run_repo.get_by_run_id(conn, "chaos", "r1")
        slow = ti_repo.get_by_key(conn, run.id, "slow")
        edges = [(h.from_state, h.to_state, h.name, h.actor, h.try_number)
                 for h in transitions_log.for_task_instance(conn, slow.id)]
    assert run.state == "success", log.read_text()[-3000:]
    assert (slow.state, slow.try_number) == ("success", 2)
    assert ("running", "up_for_retry", "Crashed", "scheduler", 1) in edges
    engine.dispose()
