"""The operator's command line on SQLite and PostgreSQL: every listing in every ``-o`` format,
whole run ids, confirmations, paused-DAG warnings, import errors in ``dags list``, ``dags test``
of the bundled examples, ``tasks why`` naming the failed upstream, and ``--help``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from sqlalchemy import Engine

from statewright.cli.app import App
from statewright.cli.main import cli
from statewright.crypto import generate_key
from statewright.sdk import DAG, PythonOperator

LONG_RUN_ID = "manual__2026-11-24T17:20:00.123456+00:00__" + "x" * 60  # > 80 columns alone

DAILY = textwrap.dedent('''
    from datetime import datetime, timedelta
    from statewright.sdk import DAG, EmptyOperator
    with DAG("ops_daily", start_date=datetime(2026, 1, 1), schedule="@daily") as dag:
        EmptyOperator(task_id="only", retry_delay=timedelta(minutes=90),
                      execution_timeout=timedelta(days=1, hours=2))
''')


def _boom() -> None:
    raise ValueError("boom")


APPS: list[App] = []


class _TrackedApp(App):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        APPS.append(self)


@pytest.fixture(autouse=True)
def _tracked_apps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("statewright.cli.main.App", _TrackedApp)


@pytest.fixture
def env(engine: Engine, tmp_path: Path) -> dict[str, str]:
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "daily.py").write_text(DAILY)
    return {"STATEWRIGHT_HOME": str(tmp_path / "home"), "STATEWRIGHT_DAGS_FOLDER": str(dags),
            "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False),
            "USER": "olga", "STATEWRIGHT_FERNET_KEY": generate_key()}


def run(env: dict[str, str], *args: str, input: str | None = None) -> Result:
    try:
        return CliRunner().invoke(cli, list(args), env=env, input=input,
                                  catch_exceptions=False)
    finally:  # a CLI process ends here: close the database connections it opened
        for app in APPS:
            if "engine" in app.__dict__:
                app.engine.dispose()
        APPS.clear()


@pytest.fixture
def failed_run(engine: Engine) -> str:
    with DAG("ops_chain") as dag:
        a = PythonOperator(task_id="extract", python_callable=_boom)
        b = PythonOperator(task_id="transform", python_callable=lambda: 2)
        c = PythonOperator(task_id="load", python_callable=lambda: 3)
        a >> b >> c
    result = dag.test(engine=engine, run_id=LONG_RUN_ID)
    assert result.states == {"extract": "failed", "transform": "upstream_failed",
                             "load": "upstream_failed"}
    return LONG_RUN_ID


def _states(env: dict[str, str]) -> dict[str, str]:
    body = json.loads(run(env, "tasks", "states", LONG_RUN_ID, "-o", "json").stdout)
    return {"run": body["state"], **{t["task_id"]: t["state"] for t in body["task_instances"]}}


# -- -o table|json|yaml|plain and whole run ids --------------------------------------------------


def test_dags_runs_in_every_format_keeps_the_run_id_whole(env: dict[str, str],
                                                          failed_run: str) -> None:
    as_json = json.loads(run(env, "dags", "runs", "-o", "json").stdout)
    assert [r["run_id"] for r in as_json] == [LONG_RUN_ID]
    as_yaml = yaml.safe_load(run(env, "dags", "runs", "-o", "yaml").stdout)
    assert as_yaml[0]["run_id"] == LONG_RUN_ID and as_yaml[0]["state"] == "failed"
    plain = run(env, "dags", "runs", "-o", "plain").stdout.splitlines()
    assert plain[0].split("\t")[:3] == ["dag_id", "run_id", "state"]
    assert plain[1].split("\t")[1] == LONG_RUN_ID  # `cut -f2` gives the id to copy
    table = run(env, "dags", "runs").stdout  # not a terminal: as wide as needed, nothing cut
    assert LONG_RUN_ID in table and "…" not in table


LISTINGS = [
    ("dags", "list"), ("dags", "runs"), ("tasks", "states", LONG_RUN_ID),
    ("tasks", "list", "ops_daily"),
    ("tasks", "history", LONG_RUN_ID, "extract"), ("pools", "list"), ("users", "list"),
    ("connections", "list"), ("variables", "list"), ("triggers", "list"),
    ("triggers", "triggerers"), ("assets", "list"), ("assets", "events"), ("dags", "late"),
    ("flows", "list"),
]


# One database (one failed run) per format, every listing read from it: the listings only read.
@pytest.mark.parametrize("fmt", ["json", "yaml", "plain", "table"])
@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)  # formatting is the same on both
def test_every_listing_takes_every_output_format(env: dict[str, str], failed_run: str,
                                                 fmt: str) -> None:
    for args in LISTINGS:
        res = run(env, *args, "-o", fmt)
        assert res.exit_code == 0, (args, res.output)
        if fmt == "json":
            json.loads(res.stdout)
        elif fmt == "yaml":
            yaml.safe_load(res.stdout)
        elif fmt == "plain":
            assert "│" not in res.stdout and "\t" in res.stdout.splitlines()[0] + "\t", args


def test_an_unknown_output_format_is_refused(env: dict[str, str]) -> None:
    res = run(env, "dags", "runs", "-o", "xml")
    assert res.exit_code == 2 and "'xml' is not one of" in res.output


# -- confirmations --------------------------------------------------------------------------------


def test_clear_asks_without_saying_dry_run_and_a_dry_run_never_asks(
        env: dict[str, str], failed_run: str) -> None:
    before = _states(env)
    declined = run(env, "tasks", "clear", LONG_RUN_ID, "-t", "^extract$", "-d", input="n\n")
    assert declined.exit_code == 1
    assert "dry run" not in declined.output
    assert "Clear these 3 task instance(s) and the run?" in declined.output
    assert "cancelled; nothing was changed" in declined.output
    assert _states(env) == before
    dry = run(env, "tasks", "clear", LONG_RUN_ID, "-d", "-t", "^extract$", "--dry-run")
    assert dry.exit_code == 0 and "?" not in dry.output and "dry run: nothing was" in dry.output
    assert _states(env) == before
    done = run(env, "tasks", "clear", LONG_RUN_ID, "-t", "^extract$", "-d", "-y")
    assert done.exit_code == 0 and "done: 3 task instance(s) changed" in done.output


@pytest.mark.parametrize("args", [
    ("tasks", "mark-success", LONG_RUN_ID, "extract"),
    ("tasks", "mark-failed", LONG_RUN_ID, "load"),
    ("dags", "runs", "mark-success", LONG_RUN_ID),
])
def test_marks_ask_and_change_nothing_on_no(env: dict[str, str], failed_run: str,
                                           args: tuple[str, ...]) -> None:
    before = _states(env)
    declined = run(env, *args, input="n\n")
    assert declined.exit_code == 1 and "cancelled; nothing was changed" in declined.output
    assert "[y/N]" in declined.output
    assert _states(env) == before
    assert run(env, *args, "--dry-run").exit_code == 0 and _states(env) == before
    applied = run(env, *args, "-y")
    assert applied.exit_code == 0 and "done:" in applied.output
    assert _states(env) != before


def test_cancel_asks(env: dict[str, str], failed_run: str) -> None:
    assert run(env, "tasks", "clear", LONG_RUN_ID, "-y").exit_code == 0  # queued again
    declined = run(env, "dags", "runs", "cancel", LONG_RUN_ID, input="n\n")
    assert declined.exit_code == 1 and _states(env)["run"] == "queued"
    assert run(env, "dags", "runs", "cancel", LONG_RUN_ID, "-y").exit_code == 0
    assert _states(env)["run"] == "cancelled"


def test_deletes_ask(env: dict[str, str]) -> None:
    assert run(env, "pools", "set", "etl", "3").exit_code == 0
    assert run(env, "variables", "set", "k", "v").exit_code == 0
    assert run(env, "connections", "add", "c1", "--conn-uri", "postgresql://h/db").exit_code == 0
    for args in (("pools", "delete", "etl"), ("variables", "delete", "k"),
                 ("connections", "delete", "c1")):
        declined = run(env, *args, input="n\n")
        assert declined.exit_code == 1 and "nothing was changed" in declined.output, args
    assert "etl" in run(env, "pools", "list", "-o", "plain").stdout
    assert run(env, "variables", "get", "k").stdout.strip() == "v"
    assert "c1" in run(env, "connections", "list", "-o", "plain").stdout
    for args in (("pools", "delete", "etl"), ("variables", "delete", "k"),
                 ("connections", "delete", "c1")):
        assert run(env, *args, "-y").exit_code == 0, args
    assert "etl" not in run(env, "pools", "list", "-o", "plain").stdout


# -- paused DAGs ----------------------------------------------------------------------------------


def test_trigger_and_backfill_on_a_paused_dag(env: dict[str, str]) -> None:
    assert run(env, "dags", "pause", "ops_daily").exit_code == 0
    trig = run(env, "dags", "trigger", "ops_daily", "--run-id", "t1")
    assert trig.exit_code == 0 and "created run t1" in trig.stdout
    assert "DAG ops_daily is paused" in trig.stderr and "dags unpause ops_daily" in trig.stderr
    waited = run(env, "backfill", "ops_daily", "--from-date", "2026-01-01", "--to-date",
                 "2026-01-02", "--wait")  # returns at once instead of waiting forever
    assert waited.exit_code == 1
    assert "DAG ops_daily is paused" in waited.output and "not waiting" in waited.output
    unpaused = run(env, "dags", "unpause", "ops_daily")
    assert unpaused.exit_code == 0
    quiet = run(env, "dags", "trigger", "ops_daily", "--run-id", "t2")
    assert quiet.exit_code == 0 and "paused" not in quiet.output


# -- dags list, dags test, tasks why, --help ------------------------------------------------------


def test_dags_list_marks_and_lists_files_with_import_errors(env: dict[str, str]) -> None:
    folder = Path(env["STATEWRIGHT_DAGS_FOLDER"])
    assert "ops_daily" in run(env, "dags", "list").stdout
    (folder / "daily.py").write_text(DAILY + "\nimport nonexistent_module_x\n")
    (folder / "broken.py").write_text("raise RuntimeError('no DAG here')\n")
    table = run(env, "dags", "list")
    assert table.exit_code == 0
    line = next(x for x in table.stdout.splitlines() if "ops_daily" in x)
    assert "IMPORT ERROR" in line  # its DAG as last imported, marked
    assert "2 file(s) failed to import" in table.stdout
    assert str(folder / "broken.py") in table.stdout and "dags errors" in table.stdout
    listed = json.loads(run(env, "dags", "list", "-o", "json").stdout)
    assert [(d["dag_id"], d["import_error"]) for d in listed] == [("ops_daily", True)]


def test_dags_test_runs_a_bundled_example(env: dict[str, str]) -> None:
    res = run(env, "dags", "test", "example_hello")
    assert res.exit_code == 0, res.output
    assert "success" in res.output
    missing = run(env, "dags", "test", "no_such_dag")
    assert missing.exit_code == 1 and "nor in the example DAGs" in missing.output


def test_tasks_why_names_the_failed_upstream(env: dict[str, str], failed_run: str) -> None:
    direct = run(env, "tasks", "why", LONG_RUN_ID, "transform")
    assert direct.exit_code == 0
    assert "failed upstream: extract (failed)" in direct.output
    chained = run(env, "tasks", "why", LONG_RUN_ID, "load")
    assert "failed upstream: transform (upstream_failed)" in chained.output
    assert "the failure started at: extract" in chained.output
    assert "tasks clear" in chained.output and "'^(extract)$' -d" in chained.output


def test_top_level_help_lists_every_command_on_one_entry(env: dict[str, str]) -> None:
    text = CliRunner().invoke(cli, ["--help"], env={**env, "COLUMNS": "100"}).output
    for name in ("clear", "mark-success", "mark-failed", "cancel", "pause", "backfill", "pools",
                 "triggers", "why", "history", "connections", "variables", "users", "standalone",
                 "api-server", "scheduler", "triggerer", "dag-processor", "celery-worker"):
        assert name in text, name
    commands = text.split("Commands:", 1)[1]
    assert "..." not in commands  # click cuts a line at 45 characters with "..."


@pytest.mark.parametrize(("value", "needle"), [
    ("soon", "STATEWRIGHT_SHUTDOWN_GRACE_SECONDS='soon' is not a number"),
    ("-3", "STATEWRIGHT_SHUTDOWN_GRACE_SECONDS=-3 is negative"),
])
def test_a_bad_shutdown_grace_is_a_clear_error(env: dict[str, str], value: str,
                                               needle: str) -> None:
    res = run({**env, "STATEWRIGHT_SHUTDOWN_GRACE_SECONDS": value}, "scheduler")
    assert res.exit_code == 1 and needle in res.output and "Traceback" not in res.output


def test_tasks_list_prints_durations_in_words(env: dict[str, str]) -> None:
    table = run(env, "tasks", "list", "ops_daily")
    assert table.exit_code == 0
    line = next(x for x in table.stdout.splitlines() if "only" in x)
    assert "1 h 30 min" in line and "1 d 2 h" in line and "5400" not in line
    missing = run(env, "tasks", "list", "nope")
    assert missing.exit_code == 1 and "No DAG with id 'nope'" in missing.output
