"""suspend_flow_run / pause_flow_run with wait_for_input: the run is paused with the input's
JSON schema; a resume gives the input (checked: 422 naming the field); a suspended run runs
again, its completed task runs' persisted results reused (their side effects not repeated)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from tests.cli_helpers import cli_uses_engine
from tests.integration.flows.conftest import runs, task_history, task_rows

from statewright.cli.main import cli
from statewright.db.engine import read_snapshot
from statewright.db.repositories import flows as flow_repo
from statewright.flows import use_backend
from statewright.flows.entry import load_flow
from statewright.flows.flow_engine import FlowRunSuspended
from statewright.services.flows.launcher import QueuedFlowRuns
from statewright.services.flows.recorder import DbBackend

FLOW_FILE = '''
import os
from pathlib import Path

from pydantic import BaseModel

from statewright.flows import flow, suspend_flow_run, task

SIDE = Path(os.environ["SIDE_EFFECTS"])


class Go(BaseModel):
    amount: int
    note: str = ""


@task(persist_result=True)
def charge(x: int) -> int:
    with SIDE.open("a") as f:
        f.write(f"charged {x}\\n")
    return x * 2


@task(persist_result=True, result_storage=os.environ["RESULTS_DIR"], result_serializer="pickle")
def labels(x: int) -> frozenset:
    with SIDE.open("a") as f:
        f.write("labelled\\n")
    return frozenset({f"x{x}"})


@flow
def billing(x: int = 5) -> int:
    first = charge(x)
    tags = labels(x)
    go = suspend_flow_run(wait_for_input=Go)
    return first + go.amount + len(tags)
'''


@pytest.fixture
def billing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    side, results = tmp_path / "side.txt", tmp_path / "results"
    monkeypatch.setenv("SIDE_EFFECTS", str(side))
    monkeypatch.setenv("RESULTS_DIR", str(results))
    monkeypatch.setenv("STATEWRIGHT_HOME", str(tmp_path / "home"))
    path = tmp_path / "billing_flows.py"
    path.write_text(FLOW_FILE)
    yield load_flow(f"{path}:billing")


def _suspend(engine: Engine, flow: Any) -> Any:
    use_backend(lambda: DbBackend(engine))
    try:
        with pytest.raises(FlowRunSuspended):
            flow(x=5)
    finally:
        use_backend(None)
    (run,) = runs(engine)
    assert (run.state, run.state_name) == ("paused", "Suspended")
    return run


def _launch(cmd: list[str], env: dict[str, str], output: IO[bytes]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(cmd, env=env, stdout=output, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)


def test_a_suspended_run_resumed_with_input_runs_again_reusing_persisted_results(
        engine: Engine, billing: Any, client: TestClient, tmp_path: Path) -> None:
    run = _suspend(engine, billing)
    with read_snapshot(engine) as conn:
        wanted = flow_repo.get_flow_run(conn, run.id).wanted_input
    assert wanted["schema"]["title"] == "Go" and "amount" in wanted["schema"]["required"]
    url = f"/api/v1/dags/billing/dagRuns/{run.run_id}"

    missing = client.patch(url, json={"state": "running"})
    assert missing.status_code == 422 and "amount" in missing.json()["detail"]
    bad = client.patch(url, json={"state": "running", "input": {"amount": "lots"}})
    assert bad.status_code == 422, bad.text
    assert "'amount'" in bad.json()["detail"]
    wrong_state = client.patch(url, json={"state": "failed", "input": {"amount": 1}})
    assert wrong_state.status_code == 422
    (still,) = runs(engine)
    assert (still.state, still.state_name) == ("paused", "Suspended")  # nothing lost

    ok = client.patch(url, json={"state": "running", "input": {"amount": 7}})
    assert ok.status_code in (200, 204), ok.text
    (queued,) = runs(engine)
    assert queued.state == "queued"  # its process ended: the scheduler starts it again

    procs: list[subprocess.Popen[bytes]] = []
    step = QueuedFlowRuns(launch=lambda c, e, o: procs.append(_launch(c, e, o)) or procs[-1])
    assert step.step(engine, datetime.now(UTC)) == 1
    for p in procs:
        p.wait(timeout=120)
    step.step(engine, datetime.now(UTC))
    (done,) = runs(engine)
    assert (done.id, done.state, done.state_name) == (run.id, "success", "Completed")
    # the side effects happened once: the second run found the persisted results
    assert (tmp_path / "side.txt").read_text().splitlines() == ["charged 5", "labelled"]
    assert task_history(engine, "charge-1") == ["Pending", "Running", "Cached"]
    assert task_history(engine, "labels-1") == ["Pending", "Running", "Cached"]
    assert {t: r.state for t, r in task_rows(engine).items()} == {
        "charge-0": "success", "labels-0": "success", "charge-1": "success",
        "labels-1": "success"}
    assert [p.name for p in (tmp_path / "results").iterdir()
            if not p.name.startswith(".")]  # the pickled result's file


def test_the_cli_resumes_with_input_and_refuses_bad_input(
        engine: Engine, billing: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli_uses_engine(monkeypatch, engine)
    run = _suspend(engine, billing)
    env = {"STATEWRIGHT_HOME": str(tmp_path / "home"),
           "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False)}

    def resume(*extra: str) -> Any:
        return CliRunner().invoke(cli, ["dags", "runs", "resume", run.run_id, *extra], env=env)

    not_json = resume("--input", "{amount")
    assert not_json.exit_code != 0 and "not JSON" in not_json.output
    bad = resume("--input", '{"note": "x"}')
    assert bad.exit_code != 0 and "'amount' is required" in bad.output, bad.output
    (still,) = runs(engine)
    assert still.state == "paused"
    ok = resume("--input", '{"amount": 3}')
    assert ok.exit_code == 0, ok.output
    with read_snapshot(engine) as conn:
        row = flow_repo.get_flow_run(conn, run.id)
    assert row.wanted_input is None
    assert list(row.pause_inputs.values()) == [{"amount": 3}]
    again = resume("--input", '{"amount": 3}')  # not paused any more: nothing to give
    assert "not paused" in again.output
