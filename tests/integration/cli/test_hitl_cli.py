"""`statewright tasks respond` and `tasks required-actions` on SQLite and PostgreSQL: a
response resumes the task as cli:$USER; bad input exits non-zero and changes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from sqlalchemy import Engine
from tests.hitl_helpers import Driven, drive

from statewright.db.repositories import hitl as hitl_repo
from statewright.db.repositories import transitions_log
from statewright.sdk import DAG, HITLOperator, Param

Run = Callable[..., Result]


@pytest.fixture
def env(engine: Engine, tmp_path: Path) -> dict[str, str]:
    return {"STATEWRIGHT_HOME": str(tmp_path / "home"),
            "STATEWRIGHT_DAGS_FOLDER": str(tmp_path / "dags"),
            "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False),
            "COLUMNS": "200", "USER": "dana"}


@pytest.fixture
def waiting(engine: Engine, tmp_path: Path) -> Driven:
    with DAG("hitl_cli") as dag:
        HITLOperator(task_id="ask", subject="Ship it?", options=["yes", "no"],
                     params={"note": Param("", type="string", maxLength=5)})
        HITLOperator(task_id="erin", subject="Erin's", options=["ok"], assigned_users=["erin"])
    d = drive(engine, dag, tmp_path)
    d.settle()
    return d


def test_required_actions_and_respond(cli_run: Run, env: dict[str, str], waiting: Driven,
                                      engine: Engine) -> None:
    listed = cli_run(env, "tasks", "required-actions", "hitl_cli", "-o", "json")
    assert listed.exit_code == 0, listed.output
    assert {a["task_id"] for a in json.loads(listed.output)} == {"ask", "erin"}
    table = cli_run(env, "tasks", "required-actions")
    assert "Ship it?" in table.output
    # bad input: nothing changes
    bad = cli_run(env, "tasks", "respond", "hitl_cli", waiting.run_id, "ask", "--option", "yes",
                  "--params-json", '{"note": "far too long"}')
    assert bad.exit_code == 1 and "'note'" in bad.output
    bad = cli_run(env, "tasks", "respond", "hitl_cli", waiting.run_id, "ask", "--option", "yes",
                  "--params-json", "{oops")
    assert bad.exit_code == 2 and "not valid JSON" in bad.output
    refused = cli_run(env, "tasks", "respond", "hitl_cli", waiting.run_id, "erin", "--option",
                      "ok")
    assert refused.exit_code == 4 and "'dana' may not respond" in refused.output
    assert waiting.states() == {"ask": "awaiting_input", "erin": "awaiting_input"}
    # the response
    ok = cli_run(env, "tasks", "respond", "hitl_cli", waiting.run_id, "ask", "--option", "no",
                 "--params-json", '{"note": "later"}')
    assert ok.exit_code == 0, ok.output
    assert "it resumes (now scheduled)" in ok.output
    again = cli_run(env, "tasks", "respond", "hitl_cli", waiting.run_id, "ask", "--option", "no")
    assert again.exit_code == 3 and "not awaiting input" in again.output
    with engine.connect() as conn:
        row = hitl_repo.get(conn, waiting.ti("ask").id)
        hist = transitions_log.for_run(conn, "hitl_cli", waiting.run_id)
    assert row.responded_by == "cli:dana" and row.params_input == {"note": "later"}
    assert [h.actor for h in hist if h.from_state == "awaiting_input"] == ["cli:dana"]
    waiting.settle()
    assert waiting.value("ask")["chosen_options"] == ["no"]
