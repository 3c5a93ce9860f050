"""Airflow's remote CLI ``airflowctl`` (``apache-airflow-ctl`` from PyPI, in its own scratch
virtualenv) against a real statewright server's /api/v2, on SQLite and PostgreSQL: log in with a
username and password, then DAGs, runs, connections, variables, pools, assets and version, each
command a separate process as a user types it."""

from __future__ import annotations

import ast
import json
import os
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from airflow_client_harness import CTL_REQUIREMENT, CTL_VENV, scratch_python, serving
from api_helpers import store_dag
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.config import Settings
from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.sdk import DAG, Asset
from statewright.services.auth.accounts import create_user
from statewright.services.dag_processor.asset_refs import sync_dag_assets


@pytest.fixture(scope="session")
def airflowctl_bin() -> Path:
    return scratch_python(CTL_VENV, CTL_REQUIREMENT, "airflowctl").with_name("airflowctl")


@dataclass
class Ctl:
    """Runs ``airflowctl`` with its own AIRFLOW_HOME; the token is kept in a file there
    (AIRFLOW_CLI_DEBUG_MODE) instead of the desktop keyring a test machine lacks."""

    binary: Path
    home: Path
    url: str

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {"PATH": os.environ.get("PATH", ""), "AIRFLOW_HOME": str(self.home),
               "AIRFLOW_CLI_DEBUG_MODE": "true", "AIRFLOW_CLI_API_RETRIES": "1",
               "NO_COLOR": "1", "COLUMNS": "400"}
        return subprocess.run([str(self.binary), *args], capture_output=True, text=True,
                              env=env, stdin=subprocess.DEVNULL, timeout=60)

    def json(self, *args: str) -> Any:
        """The command's JSON answer (its last line), asserting it succeeded."""
        done = self.run(*args, "-o", "json")
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    def fails(self, *args: str) -> str:
        done = self.run(*args)
        assert done.returncode != 0, done.stdout
        return " ".join((done.stdout + done.stderr).split())


def _seed(engine: Engine) -> None:
    with DAG("daily_ctl", schedule="@daily", start_date=datetime(2026, 1, 1, tzinfo=UTC),
             tags=["ctl"], description="a daily pipeline") as dag:
        NoopOperator(task_id="publish", outlets=[Asset(name="orders", uri="s3://bucket/orders")])
    serialized = store_dag(engine, dag)
    with transaction(engine) as conn:
        sync_dag_assets(conn, [serialized], utcnow())
    create_user(engine, "ops", "password-ops", "admin", utcnow())


@pytest.fixture
def ctl(engine: Engine, settings: Settings, airflowctl_bin: Path, tmp_path: Path
        ) -> Iterator[Ctl]:
    _seed(engine)
    with serving(engine, settings) as url:
        yield Ctl(airflowctl_bin, tmp_path / "airflow-home", url)


def _login(ctl: Ctl) -> None:
    wrong = ctl.run("auth", "login", "--api-url", ctl.url, "--username", "ops",
                    "--password", "nope")
    assert wrong.returncode == 1 and "Login failed" in wrong.stdout
    done = ctl.run("auth", "login", "--api-url", ctl.url, "--username", "ops",
                   "--password", "password-ops")
    assert done.returncode == 0 and "Login successful" in done.stdout, done.stdout
    assert json.loads((ctl.home / "production.json").read_text()) == {"api_url": ctl.url}
    token = json.loads((ctl.home / "debug_creds_production.json").read_text())
    assert token["api_token_production"].count(".") == 2  # a JWT from POST /auth/token/cli


def _dags_and_runs(ctl: Ctl) -> None:
    assert [(d["dag_id"], d["description"]) for d in ctl.json("dags", "list")] == [
        ("daily_ctl", "a daily pipeline")]
    assert ctl.json("dags", "get", "daily_ctl")[0]["tags"][0]["name"] == "ctl"
    paused = ctl.run("dags", "pause", "daily_ctl")
    assert "Dag pause successful" in paused.stdout and '"is_paused": "True"' in paused.stdout
    unpaused = ctl.run("dags", "unpause", "daily_ctl")
    assert '"is_paused": "False"' in unpaused.stdout, unpaused.stdout
    run = ctl.json("dags", "trigger", "daily_ctl", "--dag-run-id", "from_ctl",
                   "--logical-date", "2026-01-05T00:00:00Z")[0]
    assert (run["dag_run_id"], run["state"], run["run_type"]) == ("from_ctl", "queued", "manual")
    assert run["logical_date"] == "2026-01-05T00:00:00Z"
    assert ctl.json("dagrun", "get", "daily_ctl", "from_ctl")[0]["state"] == "queued"
    listed = ctl.json("dagrun", "list", "--dag-id", "daily_ctl")[0]["dag_runs"]  # no --limit
    assert [r["dag_run_id"] for r in listed] == ["from_ctl"]
    assert "has no run 'nope'" in ctl.fails("dagrun", "get", "daily_ctl", "nope")


def _connections(ctl: Ctl) -> None:
    made = ctl.json("connections", "create", "--connection-id", "warehouse", "--conn-type",
                    "postgres", "--host", "db.internal", "--login", "etl", "--password", "s3cret",
                    "--port", "5432")[0]
    assert (made["connection_id"], made["host"], made["password"]) == (
        "warehouse", "db.internal", "***")
    assert ctl.json("connections", "get", "warehouse")[0]["port"] == "5432"
    assert [c["connection_id"] for c in ctl.json("connections", "list")] == ["warehouse"]
    assert ctl.json("connections", "delete", "warehouse") == [
        {"operation": "delete", "entity": "warehouse"}]
    assert "`warehouse` was not found" in ctl.fails("connections", "get", "warehouse")


def _assets_and_jobs(ctl: Ctl) -> None:
    asset = ctl.json("assets", "list")[0]
    assert (asset["name"], asset["uri"], asset["producing_tasks"][0]["task_id"]) == (
        "orders", "s3://bucket/orders", "publish")
    assert ctl.json("jobs", "list") == []  # no scheduler or triggerer has run here


def _variables_and_pools(ctl: Ctl) -> None:
    made = ctl.json("variables", "create", "--key", "region", "--value", "eu-west-1")[0]
    assert (made["key"], made["value"]) == ("region", "eu-west-1")
    assert ctl.json("variables", "get", "region")[0]["value"] == "eu-west-1"
    assert [v["key"] for v in ctl.json("variables", "list")] == ["region"]
    ctl.json("variables", "delete", "region")
    assert "region" in ctl.fails("variables", "get", "region")

    pool = ctl.json("pools", "create", "--name", "ctl_pool", "--slots", "3",
                    "--description", "from airflowctl")[0]
    assert (pool["name"], pool["slots"], pool["open_slots"]) == ("ctl_pool", "3", "3")
    assert ctl.json("pools", "get", "ctl_pool")[0]["description"] == "from airflowctl"
    assert {p["name"] for p in ctl.json("pools", "list")} == {"ctl_pool", "default_pool"}
    ctl.json("pools", "delete", "ctl_pool")
    assert {p["name"] for p in ctl.json("pools", "list")} == {"default_pool"}


@pytest.mark.slow  # a real server and ~30 airflowctl processes of ~0.5 s CPU each
@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_airflowctl_commands_against_api_v2(ctl: Ctl) -> None:
    _login(ctl)
    remote = ctl.run("version", "--remote")  # a Python dict, not JSON
    versions = ast.literal_eval(remote.stdout.strip().splitlines()[-1])
    assert versions["airflowctl_version"] and versions["version"] == version("statewright")
    with ThreadPoolExecutor(3) as pool:  # groups that touch different things, side by side
        for done in [pool.submit(group, ctl) for group in (
                _dags_and_runs, _connections, _variables_and_pools, _assets_and_jobs)]:
            done.result()


@pytest.mark.slow  # the commands that write, once more on PostgreSQL: ~5 s
@pytest.mark.parametrize("engine", ["postgres"], indirect=True)
def test_airflowctl_writes_on_postgresql(ctl: Ctl) -> None:
    _login(ctl)
    run = ctl.json("dags", "trigger", "daily_ctl", "--dag-run-id", "pg_run")[0]
    assert (run["dag_run_id"], run["state"]) == ("pg_run", "queued")
    assert [r["dag_run_id"] for r in ctl.json("dagrun", "list", "--dag-id", "daily_ctl")[0][
        "dag_runs"]] == ["pg_run"]
    ctl.json("connections", "create", "--connection-id", "pg", "--conn-type", "postgres",
             "--password", "s3cret")
    assert ctl.json("connections", "get", "pg")[0]["password"] == "***"
    assert ctl.json("pools", "create", "--name", "pg_pool", "--slots", "2")[0]["slots"] == "2"
    assert ctl.json("variables", "create", "--key", "k", "--value", "v")[0]["value"] == "v"
