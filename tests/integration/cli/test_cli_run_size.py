"""The command line refuses to trigger a run bigger than ``STATEWRIGHT_MAX_TIS_PER_RUN``."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from statewright.cli.main import cli

DAGS = '''
from statewright.sdk import DAG, EmptyOperator

with DAG("wide"):
    for i in range(5):
        EmptyOperator(task_id=f"t{i}")
'''


def test_trigger_over_the_limit_says_why_and_creates_nothing(tmp_path: Path) -> None:
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "wide.py").write_text(DAGS)
    env = {"STATEWRIGHT_HOME": str(tmp_path / "home"), "STATEWRIGHT_DAGS_FOLDER": str(dags),
           "STATEWRIGHT_DATABASE_URL": "", "STATEWRIGHT_MAX_TIS_PER_RUN": "4"}
    runner = CliRunner()
    res = runner.invoke(cli, ["dags", "trigger", "wide", "--run-id", "r1"], env=env,
                        catch_exceptions=False)
    assert res.exit_code == 1
    assert "has 5 tasks, more than the 4 task instances a run may have" in res.output
    assert runner.invoke(cli, ["tasks", "states", "r1"], env=env).exit_code != 0
    bad = runner.invoke(cli, ["dags", "trigger", "wide"],
                        env={**env, "STATEWRIGHT_MAX_TIS_PER_RUN": "0"})
    assert bad.exit_code == 1
    assert "STATEWRIGHT_MAX_TIS_PER_RUN='0' must be greater than 0" in bad.output
    fits = runner.invoke(cli, ["dags", "trigger", "wide", "--run-id", "r2"],
                         env={**env, "STATEWRIGHT_MAX_TIS_PER_RUN": "5"})
    assert fits.exit_code == 0, fits.output
