"""The control commands of the CLI, on SQLite and PostgreSQL: answers, exit codes, actors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import Engine

from statewright.cli.app import App
from statewright.cli.main import cli
from statewright.db.repositories import transitions_log
from statewright.sdk import DAG, PythonOperator


def _boom() -> None:
    raise ValueError("boom")


@pytest.fixture
def env(engine: Engine, tmp_path: Path) -> dict[str, str]:
    return {"STATEWRIGHT_HOME": str(tmp_path / "home"),
            "STATEWRIGHT_DAGS_FOLDER": str(tmp_path / "dags"),
            "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False),
            "COLUMNS": "200", "USER": "carol"}


@pytest.fixture
def failed_run(engine: Engine) -> str:
    with DAG("cli_controls") as dag:
        a = PythonOperator(task_id="a", python_callable=lambda: 1)
        b = PythonOperator(task_id="b", python_callable=_boom)
        c = PythonOperator(task_id="c", python_callable=lambda: 3)
        a >> b >> c
    result = dag.test(engine=engine, run_id="r1")
    assert result.states == {"a": "success", "b": "failed", "c": "upstream_failed"}
    return "r1"


def run(env: dict[str, str], *args: str, input: str | None = None) -> Result:
    try:
        return CliRunner().invoke(cli, list(args), env=env, input=input,
                                  catch_exceptions=False)
    finally:  # a CLI process ends here: close the database connections it opened
        for app in APPS:
            if "engine" in app.__dict__:
                app.engine.dispose()
        APPS.clear()


APPS: list[App] = []


class _TrackedApp(App):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        APPS.append(self)


@pytest.fixture(autouse=True)
def _tracked_apps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("statewright.cli.main.App", _TrackedApp)


def _states(env: dict[str, str]) -> dict[str, Any]:
    body = json.loads(run(env, "tasks", "states", "r1", "-o", "json").output)
    return {"run": body["state"],
            **{t["task_id"]: (t["state"], t["state_name"]) for t in body["task_instances"]}}


def test_clear_dry_run_confirm_and_apply(env: dict[str, str], failed_run: str,
                                         engine: Engine) -> None:
    before = _states(env)
    dry = run(env, "tasks", "clear", "r1", "-t", "^b$", "--downstream", "--dry-run")
    assert dry.exit_code == 0
    assert "task b: failed -> restarting -> none" in dry.output
    assert "task c: upstream_failed -> restarting -> none" in dry.output
    assert "run: failed -> queued" in dry.output and "results (xcom) deleted: b, c" in dry.output
    assert "dry run: nothing was changed (2 task instance(s) would change)" in dry.output
    declined = run(env, "tasks", "clear", "r1", "-t", "^b$", "-d", input="n\n")
    assert declined.exit_code == 1 and "cancelled; nothing was changed" in declined.output
    assert _states(env) == before
    done = run(env, "tasks", "clear", "r1", "-t", "^b$", "-d", input="y\n")
    assert done.exit_code == 0 and "done: 2 task instance(s) changed" in done.output
    assert _states(env) == {"run": "queued", "a": ("success", "Success"),
                            "b": ("none", "Pending"), "c": ("none", "Pending")}
    with engine.connect() as conn:
        rows = transitions_log.for_run(conn, "cli_controls", "r1")
    assert {r.actor for r in rows[-5:]} == {"cli:carol"}  # the person at the terminal
    hist = run(env, "tasks", "history", "r1", "b")
    assert "restarting" in hist.output and "cli:carol" in hist.output


def test_clear_of_an_unknown_task_is_a_clear_error(env: dict[str, str], failed_run: str) -> None:
    before = _states(env)
    res = run(env, "tasks", "clear", "r1", "-t", "nope", "--yes")
    assert res.exit_code == 1
    assert "No task of DAG cli_controls (run r1) matches -t 'nope'" in res.output
    assert "Nothing was changed" in res.output and "Traceback" not in res.output
    assert _states(env) == before


def test_mark_task_and_mark_run_are_idempotent(env: dict[str, str], failed_run: str) -> None:
    res = run(env, "tasks", "mark-success", "r1", "b", "--downstream", "-y")
    assert res.exit_code == 0 and "task b: failed -> success" in res.output
    assert _states(env)["run"] == "success"
    again = run(env, "tasks", "mark-success", "r1", "b")
    assert again.exit_code == 0 and "nothing changed" in again.output
    same = run(env, "dags", "runs", "mark-success", "r1")
    assert same.exit_code == 0
    assert "nothing changed: the run is success already" in same.output
    failed = run(env, "dags", "runs", "mark-failed", "r1", "--dag-id", "cli_controls", "-y")
    assert failed.exit_code == 0 and "run: success -> failed" in failed.output
    unknown = run(env, "tasks", "mark-failed", "r1", "zz")
    assert unknown.exit_code == 1 and "has no task 'zz'" in unknown.output


def test_cancel_pause_resume_and_the_run_list(env: dict[str, str], failed_run: str,
                                              engine: Engine) -> None:
    refused = run(env, "dags", "runs", "cancel", "r1")
    assert refused.exit_code == 1 and "has finished (failed)" in refused.output
    assert run(env, "tasks", "clear", "r1", "--yes").exit_code == 0  # queued again
    paused = run(env, "dags", "runs", "pause", "r1")
    assert paused.exit_code == 0 and "run: queued -> paused" in paused.output
    resumed = run(env, "dags", "runs", "resume", "r1")
    assert resumed.exit_code == 0 and "run: paused -> queued" in resumed.output
    cancelled = run(env, "dags", "runs", "cancel", "r1", "-y")
    assert cancelled.exit_code == 0 and "task a: none -> skipped named Cancelled" in \
        cancelled.output
    assert _states(env) == {"run": "cancelled", **{t: ("skipped", "Cancelled") for t in "abc"}}
    states = run(env, "tasks", "states", "r1")
    assert "Cancelled" in states.output and "skipped" in states.output
    again = run(env, "dags", "runs", "cancel", "r1")
    assert again.exit_code == 0 and "cancelled already" in again.output
    listed = run(env, "dags", "runs")
    assert listed.exit_code == 0 and "cli_controls" in listed.output
    by_dag = run(env, "dags", "runs", "cli_controls", "--limit", "5")
    assert by_dag.exit_code == 0 and "cancelled" in by_dag.output
    missing = run(env, "dags", "runs", "pause", "nope")
    assert missing.exit_code == 1 and "No DAG run with run id 'nope'" in missing.output
