"""The flow's process killed: SIGINT / SIGTERM end the run Crashed from inside (as Prefect
does); SIGKILL leaves it to the recorder process, which ends it Crashed (Prefect stays
Running). The running task run ends Crashed with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine
from tests.integration.flows.conftest import run_history, runs, task_history

SCRIPT = """
import sys, time
from statewright.flows import flow, task

@task
def slow():
    open(sys.argv[1], "w").write("started")
    time.sleep(120)

@flow
def victim():
    slow()

victim()
"""


def _url(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def _wait_for(predicate, what: str, seconds: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.parametrize(("sig", "group"), [
    (signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGKILL, False),
    (signal.SIGINT, True),  # Ctrl-C at a terminal: the whole process group
])
def test_a_signalled_flow_process_ends_crashed(engine: Engine, tmp_path: Path,
                                               sig: signal.Signals, group: bool) -> None:
    script = tmp_path / "victim.py"
    script.write_text(SCRIPT)
    marker = tmp_path / "started"
    env = {**os.environ, "STATEWRIGHT_DATABASE_URL": _url(engine),
           "STATEWRIGHT_FLOWS_BACKEND": "recorder"}
    proc = subprocess.Popen([sys.executable, str(script), str(marker)], env=env,
                            stderr=subprocess.PIPE, start_new_session=group)
    try:
        _wait_for(marker.exists, "the task to start")
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        if proc.stderr:
            proc.stderr.close()
    _wait_for(lambda: runs(engine) and runs(engine)[0].state == "failed", "the crash")
    (run,) = runs(engine)
    assert run.state_name == "Crashed"
    assert run_history(engine)[-1] == ("failed", "Crashed")
    assert task_history(engine, "slow-0") == ["Pending", "Running", "Crashed"]


def test_a_database_the_recorder_cannot_use_is_a_clear_error_before_the_flow_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from statewright.flows import flow
    from statewright.flows.remote import RecorderError

    ran: list[int] = []

    @flow
    def never() -> None:
        ran.append(1)

    # (a new SQLite file is created and migrated on first use: tests/…/test_fresh_home.py)
    (tmp_path / "garbage.db").write_bytes(b"not a database file " * 100)
    monkeypatch.setenv("STATEWRIGHT_DATABASE_URL", f"sqlite:///{tmp_path / 'garbage.db'}")
    monkeypatch.setenv("STATEWRIGHT_FLOWS_BACKEND", "recorder")
    with pytest.raises(RecorderError, match="statewright db migrate"):
        never()
    assert ran == []


def test_an_unknown_backend_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from statewright.flows import flow

    @flow
    def never() -> None:
        return None

    monkeypatch.setenv("STATEWRIGHT_FLOWS_BACKEND", "postgres")
    with pytest.raises(ValueError, match="'postgres' is not a backend"):
        never()
