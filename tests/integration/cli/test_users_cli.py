"""`statewright users …`: users and roles from the command line; standalone's first admin;
the CLI's state changes recorded as cli:$USER."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.cli.app import App
from statewright.cli.commands.users import initial_admin
from statewright.config import load_settings
from statewright.services.auth.accounts import INITIAL_PASSWORD_FILE, authenticate


@pytest.fixture
def env(engine: Engine, tmp_path: Path) -> dict[str, str]:
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "one.py").write_text("from statewright.sdk import DAG, EmptyOperator\n"
                                 "with DAG('one') as dag:\n    EmptyOperator(task_id='t')\n")
    return {"STATEWRIGHT_HOME": str(tmp_path / "home"), "STATEWRIGHT_DAGS_FOLDER": str(dags),
            "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False),
            "COLUMNS": "200", "USER": "carol"}


Run = Callable[..., Result]


@pytest.fixture
def run(cli_run: Run) -> Run:
    return cli_run


def _users(run: Run, env: dict[str, str]) -> dict[str, str]:
    out = run(env, "users", "list", "-o", "json")
    assert out.exit_code == 0, out.output
    return {u["username"]: u["role"] for u in json.loads(out.output)}


def test_create_list_set_role_set_password_delete(run: Run, env: dict[str, str],
    engine: Engine) -> None:
    made = run(env, "users", "create", "alice", "--role", "operator", "--password-stdin",
               input="s3cret-pass\n")
    assert made.exit_code == 0 and "created user alice (operator)" in made.output
    assert run(env, "users", "create", "root", "-r", "admin", "-p", "root-pass1").exit_code == 0
    assert _users(run, env) == {"alice": "operator", "root": "admin"}
    assert authenticate(engine, "alice", "s3cret-pass") is not None
    assert run(env, "users", "set-role", "alice", "viewer").exit_code == 0
    changed = run(env, "users", "set-password", "alice", input="n3w-password\nn3w-password\n")
    assert changed.exit_code == 0 and "new password for alice" in changed.output
    assert authenticate(engine, "alice", "s3cret-pass") is None
    assert authenticate(engine, "alice", "n3w-password").role == "viewer"
    assert run(env, "users", "delete", "alice", "--yes").exit_code == 0
    assert _users(run, env) == {"root": "admin"}
    table = run(env, "users", "list")
    assert "root" in table.output and "admin" in table.output


def test_bad_input_is_a_clear_error_and_changes_nothing(run: Run, env: dict[str, str]) -> None:
    assert run(env, "users", "create", "root", "-r", "admin", "-p", "root-pass1").exit_code == 0
    cases = [
        (["users", "create", "root", "-p", "another-1"], "exists already"),
        (["users", "create", "bob", "-p", "short"], "too short"),
        (["users", "create", "b/b", "-p", "long-enough"], "is not allowed"),
        (["users", "set-role", "nobody", "viewer"], "No user 'nobody'"),
        (["users", "set-role", "root", "viewer"], "only admin"),
        (["users", "delete", "root", "--yes"], "only admin"),
        (["users", "set-password", "nobody", "-p", "long-enough"], "No user 'nobody'"),
    ]
    for args, message in cases:
        res = run(env, *args)
        assert res.exit_code != 0 and message in res.output, (args, res.output)
    bad_role = run(env, "users", "create", "bob", "-r", "root", "-p", "long-enough")
    assert bad_role.exit_code == 2 and "'root' is not one of" in bad_role.output
    assert _users(run, env) == {"root": "admin"}


def test_a_token_from_the_cli_works_on_the_api(run: Run, env: dict[str, str],
    engine: Engine) -> None:
    run(env, "users", "create", "vera", "-r", "viewer", "-p", "vera-pass1")
    out = run(env, "users", "create-token", "vera", "--name", "grafana")
    assert out.exit_code == 0 and "not shown again" in out.output
    secret = out.output.strip().splitlines()[-1]
    settings = load_settings(env)
    with TestClient(create_app(engine=engine, settings=settings)) as c:
        me = c.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {secret}"})
    assert me.status_code == 200 and me.json()["username"] == "vera"


def test_standalone_creates_the_first_admin_once(env: dict[str, str], engine: Engine,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    app = App(load_settings(env))
    try:
        _first_admin(app, engine, capsys)
    finally:
        app.engine.dispose()


def _first_admin(app: App, engine: Engine, capsys: pytest.CaptureFixture[str]) -> None:
    initial_admin(app)
    printed = capsys.readouterr().out
    path = app.settings.home / INITIAL_PASSWORD_FILE
    username, password = path.read_text().split()
    assert username == "admin" and password in printed.replace("\n", "")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert authenticate(engine, "admin", password).role == "admin"
    initial_admin(app)  # users exist now: nothing is created or printed again
    assert capsys.readouterr().out == ""


def test_a_cli_trigger_is_recorded_as_the_person(run: Run, env: dict[str, str],
    engine: Engine) -> None:
    assert run(env, "dags", "trigger", "one", "--run-id", "r1").exit_code == 0
    hist = run(env, "tasks", "history", "r1", "t")
    assert hist.exit_code == 0 and "cli:carol" in hist.output
    runs = run(env, "dags", "runs", "one")
    assert "r1" in runs.output
