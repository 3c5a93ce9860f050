"""The command line: the core commands and their answers to bad input."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from statewright.cli.main import cli

GOOD = textwrap.dedent('''
    from statewright.sdk import DAG, EmptyOperator, task
    with DAG("good") as dag:
        @task
        def hello():
            return "hi"
        hello() >> EmptyOperator(task_id="done")
''')


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "good.py").write_text(GOOD)
    return {
        "STATEWRIGHT_HOME": str(tmp_path / "home"),
        "STATEWRIGHT_DAGS_FOLDER": str(dags),
        "STATEWRIGHT_DATABASE_URL": "",
    }


def run(env: dict[str, str], *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_db_migrate_is_idempotent(env: dict[str, str]) -> None:
    first, second = run(env, "db", "migrate"), run(env, "db", "migrate")
    assert first.exit_code == 0 and second.exit_code == 0
    assert "revision" in second.output


def test_dags_list_trigger_states_history(env: dict[str, str]) -> None:
    listed = run(env, "dags", "list", "-o", "json")
    assert listed.exit_code == 0
    assert [d["dag_id"] for d in json.loads(listed.output)] == ["good"]
    trig = run(env, "dags", "trigger", "good", "--conf", '{"x": 1}', "--run-id", "r1")
    assert trig.exit_code == 0 and "r1" in trig.output
    states = run(env, "tasks", "states", "r1", "-o", "json")
    body = json.loads(states.output)
    assert body["state"] == "queued"
    assert {t["task_id"]: t["state"] for t in body["task_instances"]} == {
        "hello": "none", "done": "none"}
    hist = run(env, "tasks", "history", "r1", "hello")
    assert hist.exit_code == 0 and "(created)" in hist.output


def test_dags_test_runs_the_dag_and_reports(env: dict[str, str]) -> None:
    res = run(env, "dags", "test", "good")
    assert res.exit_code == 0, res.output
    assert "success" in res.output and "hello" in res.output


def test_a_missing_dag_id_is_a_clear_error(env: dict[str, str]) -> None:
    for args in (("dags", "trigger", "nope"), ("dags", "test", "nope")):
        res = run(env, *args)
        assert res.exit_code == 1
        assert "No DAG with id 'nope'" in res.output and "dags list" in res.output


def test_no_dag_id_at_all_is_a_usage_error(env: dict[str, str]) -> None:
    res = run(env, "dags", "trigger")
    assert res.exit_code == 2 and "Missing argument 'DAG_ID'" in res.output


def test_bad_conf_is_rejected_before_anything_is_created(env: dict[str, str]) -> None:
    res = run(env, "dags", "trigger", "good", "--conf", "{not json")
    assert res.exit_code == 2 and "--conf is not valid JSON" in res.output
    res = run(env, "dags", "trigger", "good", "--conf", "[1, 2]")
    assert res.exit_code == 1 and "JSON object" in res.output
    runs = run(env, "dags", "runs", "good")
    assert "manual__" not in runs.output


def test_a_broken_dag_file_is_reported_and_others_still_load(env: dict[str, str]) -> None:
    Path(env["STATEWRIGHT_DAGS_FOLDER"], "broken.py").write_text("import nonexistent_module\n")
    listed = run(env, "dags", "list", "-o", "json")
    assert [d["dag_id"] for d in json.loads(listed.stdout)] == ["good"]
    assert "broken.py" in listed.stderr  # the note goes beside the JSON, not into it
    errors = run(env, "dags", "errors")
    assert errors.exit_code == 1
    assert "broken.py" in errors.output and "nonexistent_module" in errors.output


def test_trigger_at_a_logical_date_once_and_a_bad_date_is_a_usage_error(
        env: dict[str, str]) -> None:
    made = run(env, "dags", "trigger", "good", "-r", "first", "-l", "2026-03-01")
    assert made.exit_code == 0, made.output
    listed = json.loads(run(env, "dags", "runs", "good", "-o", "json").stdout)
    assert [(r["run_id"], r["logical_date"]) for r in listed] == [
        ("first", "2026-03-01T00:00:00+00:00")]
    again = run(env, "dags", "trigger", "good", "--logical-date", "2026-03-01T01:00:00+01:00")
    assert again.exit_code == 1
    assert "already has a run at logical date 2026-03-01T00:00:00+00:00 ('first')" in (
        again.output)
    bad = run(env, "dags", "trigger", "good", "-l", "March 1st")
    assert bad.exit_code == 2 and "'March 1st' is not an ISO 8601 date" in bad.output
    assert len(json.loads(run(env, "dags", "runs", "good", "-o", "json").stdout)) == 1


def test_dags_errors_names_a_deep_file_whole_and_as_text(env: dict[str, str]) -> None:
    deep = Path(env["STATEWRIGHT_DAGS_FOLDER"], *[f"team_{i}_pipelines" for i in range(8)])
    deep.mkdir(parents=True)
    (deep / "[red]broken.py").write_text("import nonexistent_module\n")
    errors = run(env, "dags", "errors")
    assert errors.exit_code == 1
    assert str(deep / "[red]broken.py") in errors.output  # not cut short, not read as markup
    assert "nonexistent_module" in errors.output


@pytest.mark.parametrize(("body", "needle"), [
    ("with DAG('c') as dag:\n    a = EmptyOperator(task_id='a')\n    b = EmptyOperator("
     "task_id='b')\n    a >> b >> a\n", "cycle"),
    ("with DAG('d') as dag:\n    EmptyOperator(task_id='a')\n    EmptyOperator(task_id='a')\n",
     "a"),
    ("with DAG('r') as dag:\n    EmptyOperator(task_id='a', trigger_rule='sometimes')\n",
     "sometimes"),
])
def test_definition_errors_name_the_problem(env: dict[str, str], body: str, needle: str) -> None:
    Path(env["STATEWRIGHT_DAGS_FOLDER"], "bad.py").write_text(
        "from statewright.sdk import DAG, EmptyOperator\n" + body)
    errors = run(env, "dags", "errors")
    assert errors.exit_code == 1 and needle in errors.output


def test_an_unreachable_database_is_a_clear_error(env: dict[str, str]) -> None:
    env = {**env, "STATEWRIGHT_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"}
    res = run(env, "dags", "list")
    assert res.exit_code == 1
    assert "Cannot connect to the database" in res.output
    assert "STATEWRIGHT_DATABASE_URL" in res.output


def test_unknown_run_id(env: dict[str, str]) -> None:
    res = run(env, "tasks", "states", "nope")
    assert res.exit_code == 1 and "No DAG run with run id 'nope'" in res.output


def test_tasks_why_explains_a_waiting_task(env: dict[str, str]) -> None:
    run(env, "dags", "trigger", "good", "--run-id", "r9")
    res = run(env, "tasks", "why", "r9", "done")
    assert res.exit_code == 0, res.output
    assert "none (Pending)" in res.output
    assert "trigger rule all_success over upstream [hello=none]" in res.output
    assert "not met yet" in res.output
    res = run(env, "tasks", "why", "r9", "hello")
    assert "no upstream tasks" in res.output
    assert run(env, "tasks", "why", "r9", "nope").exit_code == 1


def test_db_reset_asks_then_empties(env: dict[str, str]) -> None:
    run(env, "dags", "trigger", "good", "--run-id", "keep")
    refused = CliRunner().invoke(cli, ["db", "reset"], env=env, input="n\n")
    assert refused.exit_code == 1 and "nothing was changed" in refused.output
    assert "keep" in run(env, "tasks", "states", "keep").output
    done = run(env, "db", "reset", "--yes")
    assert done.exit_code == 0
    assert run(env, "tasks", "states", "keep").exit_code == 1
