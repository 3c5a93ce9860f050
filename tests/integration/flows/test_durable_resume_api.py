"""Resuming a crashed durable flow run through the REST API: the run is queued again
(``Resuming``, with the person in its history), the scheduler's launcher starts the flow on it,
and completed calls are not made again. Refusals answer 404 / 409 / 403 and change nothing."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select
from tests.integration.flows.conftest import runs, task_rows

from statewright.db.tables import state_transition
from statewright.flows import use_backend
from statewright.flows.entry import load_flow
from statewright.services.flows.launcher import QueuedFlowRuns
from statewright.services.flows.recorder import DbBackend

FLOW_FILE = '''
import os
from pathlib import Path

from statewright.flows import flow, task

SIDE = Path(os.environ["SIDE_EFFECTS"])


@task
def charge(n: int) -> int:
    with SIDE.open("a") as out:
        out.write(f"charged {n}\\n")
    return n * 2


@flow(durable=True)
def billing(count: int = 3) -> int:
    total = sum(charge(n) for n in range(count))
    if not (SIDE.parent / "go").exists():
        raise KeyboardInterrupt  # the process is going down: the run ends Crashed
    return total
'''


@pytest.fixture
def billing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("SIDE_EFFECTS", str(tmp_path / "side.txt"))
    monkeypatch.setenv("STATEWRIGHT_HOME", str(tmp_path / "home"))
    path = tmp_path / "billing_flows.py"
    path.write_text(FLOW_FILE)
    yield load_flow(f"{path}:billing")


def _crash(engine: Engine, flow: Any) -> Any:
    use_backend(lambda: DbBackend(engine))
    try:
        with pytest.raises(KeyboardInterrupt):
            flow()
    finally:
        use_backend(None)
    (run,) = runs(engine)
    assert (run.state, run.state_name) == ("failed", "Crashed")
    return run


def _launch(cmd: list[str], env: dict[str, str], output: IO[bytes]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(cmd, env=env, stdout=output, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)


def test_an_operator_resumes_a_crashed_durable_run_and_the_scheduler_runs_it(
        engine: Engine, billing: Any, client: TestClient, tmp_path: Path,
        auth_headers: Callable[..., dict[str, str]]) -> None:
    run = _crash(engine, billing)
    url = f"/api/v1/dags/billing/dagRuns/{run.run_id}/resume"
    viewer = client.post(url, headers=auth_headers(engine, "vera", "viewer"))
    assert viewer.status_code == 403
    assert client.post("/api/v1/dags/billing/dagRuns/nope/resume").status_code == 404

    (tmp_path / "go").touch()
    ok = client.post(url)
    assert ok.status_code == 200, ok.text
    assert (ok.json()["state"], ok.json()["state_name"]) == ("queued", "Resuming")
    again = client.post(url)
    assert again.status_code == 409 and "not Crashed" in again.json()["detail"]

    procs: list[subprocess.Popen[bytes]] = []
    step = QueuedFlowRuns(launch=lambda c, e, o: procs.append(_launch(c, e, o)) or procs[-1])
    assert step.step(engine, datetime.now(UTC)) == 1
    for p in procs:
        p.wait(timeout=120)
    step.step(engine, datetime.now(UTC))  # reaps the finished process
    (done,) = runs(engine)
    assert (done.id, done.state, done.state_name) == (run.id, "success", "Completed")
    assert (tmp_path / "side.txt").read_text().splitlines() == [
        "charged 0", "charged 1", "charged 2"]  # once each: the resume replayed them
    assert set(task_rows(engine)) == {"charge-0", "charge-1", "charge-2"}
    with engine.connect() as conn:
        actor = conn.execute(select(state_transition.c.actor).where(
            state_transition.c.entity == "dag_run", state_transition.c.to_state == "queued",
            state_transition.c.name == "Resuming")).scalar()
    assert actor == "user:admin"


def test_a_completed_run_is_not_resumed(engine: Engine, billing: Any, client: TestClient,
                                        tmp_path: Path) -> None:
    (tmp_path / "go").touch()
    use_backend(lambda: DbBackend(engine))
    try:
        assert billing() == 6
    finally:
        use_backend(None)
    (run,) = runs(engine)
    answer = client.post(f"/api/v1/dags/billing/dagRuns/{run.run_id}/resume")
    assert answer.status_code == 409
    assert "only a crashed run is resumed" in answer.json()["detail"]
    (same,) = runs(engine)
    assert (same.state, same.state_name) == ("success", "Completed")
