"""A flow run triggered from the API (or `dags trigger`) for a flow nobody serves: the
scheduler's step starts the flow's process, which adopts the queued run and records it."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from tests.integration.flows.conftest import runs, task_rows

from statewright.db.engine import transaction
from statewright.db.repositories import flows as flow_repo
from statewright.flows.entry import load_flow
from statewright.services.flows.launcher import QueuedFlowRuns
from statewright.services.flows.recorder import DbBackend

FLOW_FILE = '''
from statewright.flows import flow, task

@task
def double(x: int) -> int:
    return 2 * x

@flow
def doubler(n: int = 2) -> int:
    futures = double.map(range(n))
    return sum(f.result() for f in futures) + double(100)
'''


class Started:
    """The launch the step uses, keeping the processes it started (to wait for them)."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self.commands: list[list[str]] = []

    def __call__(self, cmd: list[str], env: dict[str, str],
                 output: IO[bytes]) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(cmd, env=env, stdout=output, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        self.procs.append(proc)
        self.commands.append(cmd)
        return proc

    def wait(self) -> None:
        for proc in self.procs:
            proc.wait(timeout=120)


def _ran_once(engine: Engine, tmp_path: Path, name: str,
              monkeypatch: pytest.MonkeyPatch) -> Path:
    """The flow's file, run once from there: the flow's row knows the file and function."""
    monkeypatch.setenv("STATEWRIGHT_HOME", str(tmp_path / "home"))
    path = tmp_path / f"{name}.py"
    path.write_text(FLOW_FILE)
    _run_once_here(engine, path)
    return path


def _run_once_here(engine: Engine, path: Path) -> None:
    flow = load_flow(f"{path}:doubler")
    from statewright.flows import use_backend

    use_backend(lambda: DbBackend(engine))
    try:
        assert flow(n=1) == 200
    finally:
        use_backend(None)


def test_a_run_triggered_through_the_api_is_started_by_the_scheduler(
        engine: Engine, tmp_path: Path, client: TestClient,
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = _ran_once(engine, tmp_path, "doubler_flows", monkeypatch)
    res = client.post("/api/v1/dags/doubler/dagRuns", json={"conf": {"n": 3}})
    assert res.status_code in (200, 201), res.text
    run_id = res.json()["dag_run_id"]
    (queued,) = [r for r in runs(engine) if r.run_id == run_id]
    assert queued.state == "queued"

    started = Started()
    step = QueuedFlowRuns(launch=started)
    assert step.step(engine, datetime.now(UTC)) == 1
    assert started.commands[0][-1] == f"{path}:doubler"
    assert step.step(engine, datetime.now(UTC)) == 0  # started once, not again
    started.wait()
    assert step.step(engine, datetime.now(UTC)) == 0  # it adopted the run: nothing to fail
    (run,) = [r for r in runs(engine) if r.run_id == run_id]
    assert (run.state, run.state_name) == ("success", "Completed"), step
    mine = {k: v for k, v in task_rows(engine).items() if v.dag_run_id == run.id}
    assert sorted(mine) == ["double-0", "double-1", "double-2", "double-3"]
    assert {v.state for v in mine.values()} == {"success"}


def test_a_run_of_a_flow_without_a_known_file_fails_with_the_reason(engine: Engine,
                                                                     client: TestClient) -> None:
    with transaction(engine) as conn:
        flow_repo.ensure_flow(conn, "nameless", fileloc=None, description=None,
                              now=datetime.now(UTC))
    res = client.post("/api/v1/dags/nameless/dagRuns", json={})
    assert res.status_code in (200, 201), res.text
    started = Started()
    assert QueuedFlowRuns(launch=started).step(engine, datetime.now(UTC)) == 1
    assert started.procs == []
    (run,) = runs(engine)
    assert run.state == "failed"
    assert "no known file" in (run.state_message or "")


def test_a_process_that_cannot_adopt_the_run_fails_it_with_its_output(
        engine: Engine, tmp_path: Path, client: TestClient,
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = _ran_once(engine, tmp_path, "doubler_gone", monkeypatch)
    path.unlink()  # the file moved away since
    run_id = client.post("/api/v1/dags/doubler/dagRuns", json={}).json()["dag_run_id"]
    started = Started()
    step = QueuedFlowRuns(launch=started)
    step.step(engine, datetime.now(UTC))
    started.wait()
    assert step.step(engine, datetime.now(UTC)) == 1
    (run,) = [r for r in runs(engine) if r.run_id == run_id]
    assert run.state == "failed"
    assert "does not exist" in (run.state_message or ""), run.state_message


def test_a_served_flows_runs_are_left_to_its_serving_process_for_a_while(
        engine: Engine, tmp_path: Path, recorded: DbBackend, client: TestClient) -> None:
    from statewright.flows.serving import deployment_of

    path = tmp_path / "doubler_served.py"
    path.write_text(FLOW_FILE)
    flow = load_flow(f"{path}:doubler")
    recorded.register_deployment(deployment_of(
        flow, name="d", cron=None, interval=3600, parameters={"n": 1}, description=None,
        tags=None, paused=False))
    client.post("/api/v1/dags/doubler/dagRuns", json={})
    started = Started()
    step = QueuedFlowRuns(served_grace=timedelta(seconds=30), launch=started)
    assert step.step(engine, datetime.now(UTC)) == 0
    later = datetime.now(UTC) + timedelta(seconds=31)
    assert step.step(engine, later) == 1
    started.wait()
    assert step.step(engine, later) == 0 and not step.started  # finished: forgotten
    (run,) = runs(engine)
    assert (run.state, run.conf) == ("success", {})


def test_the_api_and_the_ui_show_a_flow_as_a_flow(engine: Engine, tmp_path: Path,
                                                   client: TestClient) -> None:
    path = tmp_path / "doubler_shown.py"
    path.write_text(FLOW_FILE)
    _run_once_here(engine, path)  # n=1: double-0 and double-1
    listed = {d["dag_id"]: d for d in client.get("/api/v1/dags").json()["dags"]}
    assert listed["doubler"]["kind"] == "flow"
    assert client.get("/api/v1/dags/doubler").json()["kind"] == "flow"
    page = client.get("/dags/doubler")
    assert page.status_code == 200
    assert "2 task runs in its last run" in page.text
    assert "0 tasks" not in page.text
