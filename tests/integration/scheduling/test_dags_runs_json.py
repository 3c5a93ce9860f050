"""`statewright dags runs [DAG] -o json`: the recent runs, as Airflow's `dags list-runs -o json`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import Engine

from statewright.cli.main import cli

TWO = textwrap.dedent('''
    from statewright.sdk import DAG, EmptyOperator
    for name in ("first", "second"):
        with DAG(name, schedule=None):
            EmptyOperator(task_id="a")
''')


def test_runs_as_json(cli_env: dict[str, str], engine: Engine) -> None:
    (Path(cli_env["STATEWRIGHT_DAGS_FOLDER"]) / "two.py").write_text(TWO)
    runner = CliRunner()
    for dag_id, run_id in (("first", "r1"), ("second", "r2"), ("first", "r3")):
        made = runner.invoke(cli, ["dags", "trigger", dag_id, "--run-id", run_id], env=cli_env)
        assert made.exit_code == 0, made.output
    result = runner.invoke(cli, ["dags", "runs", "first", "-o", "json"], env=cli_env)
    assert result.exit_code == 0, result.output
    runs = json.loads(result.output)
    assert [(r["dag_id"], r["run_id"], r["state"], r["state_name"], r["run_type"])
            for r in runs] == [("first", "r3", "queued", "Queued", "manual"),
                               ("first", "r1", "queued", "Queued", "manual")]
    assert runs[0]["queued_at"].endswith("+00:00") and runs[0]["end_date"] is None
    every = json.loads(runner.invoke(cli, ["dags", "runs", "-o", "json", "--limit", "2"],
                                     env=cli_env).output)
    assert [r["run_id"] for r in every] == ["r3", "r2"]
