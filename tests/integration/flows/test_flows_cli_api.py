"""Flow runs in the CLI and the REST API, beside DAG runs: `statewright flows run` (a file that
imports prefect, under the switch), `flows list`, the grid and the history."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from tests.cli_helpers import cli_uses_engine
from tests.integration.flows.conftest import runs

from statewright.api import create_app
from statewright.cli.main import cli
from statewright.config import load_settings

TUTORIAL = Path(__file__).parent / "tutorial" / "hello.py"


def _env(engine: Engine, tmp_path: Path) -> dict[str, str]:
    """The CLI on the test's engine; the flow's processes on its URL."""
    return {"STATEWRIGHT_HOME": str(tmp_path / "home"),
            "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False),
            "STATEWRIGHT_PREFECT_COMPAT": "true", "STATEWRIGHT_FLOWS_BACKEND": "recorder"}


@pytest.fixture(autouse=True)
def _shared_engine(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    cli_uses_engine(monkeypatch, engine)


def test_flows_run_records_a_prefect_file_unchanged_and_flows_list_shows_it(
        engine: Engine, tmp_path: Path) -> None:
    env = _env(engine, tmp_path)
    res = CliRunner().invoke(cli, ["flows", "run", f"{TUTORIAL}:hello_world"], env=env)
    assert res.exit_code == 0, res.output
    assert {(r.dag_id, r.state) for r in runs(engine)} == {
        ("hello-world", "success"), ("something-else", "success")}
    listed = CliRunner().invoke(cli, ["flows", "list", "-o", "json"], env=env)
    assert {f["flow"] for f in json.loads(listed.output)} == {"hello-world", "something-else"}


def test_flows_run_refuses_a_bad_entrypoint(engine: Engine, tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["flows", "run", "nowhere.py:f"], env=_env(engine, tmp_path))
    assert res.exit_code == 2
    assert "path/to/file.py:function" in res.output


def test_a_flow_run_is_in_the_grid_and_its_history_in_the_api(
        engine: Engine, recorded: object, tmp_path: Path,
        auth_headers: Callable[..., dict[str, str]]) -> None:
    from statewright.flows import flow, task

    @task
    def step(x: int) -> int:
        return x

    @flow
    def shown() -> list[int]:
        return [step(1), step(2)]

    shown()
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home"),
                              "STATEWRIGHT_LOGS_FOLDER": str(tmp_path / "logs")})
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine, "viewer", "viewer")) as client:
        grid = client.get("/api/v1/dags/shown/grid").json()
        assert [row["task_id"] for row in grid["rows"]] == ["step-0", "step-1"]
        assert all(row["in_dag"] for row in grid["rows"])  # not "no longer in the DAG"
        (run,) = grid["dag_runs"]
        assert run["state_name"] == "Completed"
        history = client.get(f"/api/v1/dags/shown/dagRuns/{run['dag_run_id']}/history").json()
        names = [(h["task_id"], h["name"]) for h in history["transitions"]]
        assert names[:2] == [(None, "Pending"), (None, "Running")]
        assert ("step-0", "Completed") in names and names[-1] == (None, "Completed")


def test_a_task_runs_logs_are_read_per_try_in_the_api(
        engine: Engine, tmp_path: Path, auth_headers: Callable[..., dict[str, str]]) -> None:
    from statewright.flows import flow, get_run_logger, task, use_backend
    from statewright.services.flows.recorder import DbBackend

    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home"),
                              "STATEWRIGHT_LOGS_FOLDER": str(tmp_path / "logs")})
    use_backend(lambda: DbBackend(engine, logs_folder=settings.logs_folder))
    tries: list[int] = []

    @task(retries=1, log_prints=True)
    def talk() -> str:
        tries.append(1)
        get_run_logger().info("try %d speaking", len(tries))
        if len(tries) == 1:
            raise ValueError("again")
        print("printed on the second try")
        return "ok"

    @flow
    def chatty() -> str:
        return talk()

    try:
        assert chatty() == "ok"
    finally:
        use_backend(None)
    (run,) = runs(engine)
    url = f"/api/v1/dags/chatty/dagRuns/{run.run_id}/taskInstances/talk-0/logs"
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine, "viewer", "viewer")) as client:
        first = client.get(f"{url}/1").json()["content"]
        second = client.get(f"{url}/2").json()["content"]
    assert "try 1 speaking" in first and "printed" not in first
    assert "try 2 speaking" in second and "printed on the second try" in second
