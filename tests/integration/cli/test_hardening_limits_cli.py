"""``--conf`` on the command line meets the input limits as a conf sent to the API does: past
one, a clear error naming its setting and no run created."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from statewright.cli.main import cli

GOOD = textwrap.dedent('''
    from statewright.sdk import DAG, EmptyOperator
    with DAG("good") as dag:
        EmptyOperator(task_id="done")
''')


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "good.py").write_text(GOOD)
    return {"STATEWRIGHT_HOME": str(tmp_path / "home"), "STATEWRIGHT_DAGS_FOLDER": str(dags),
            "STATEWRIGHT_DATABASE_URL": "", "STATEWRIGHT_MAX_INPUT_ITEMS": "100"}


def run(env: dict[str, str], *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_a_conf_past_the_limits_is_refused_naming_the_limit(env: dict[str, str]) -> None:
    deep = "{" + '"a": [' * 2000 + "]" * 2000 + "}"
    res = run(env, "dags", "trigger", "good", "--conf", deep)
    assert res.exit_code == 1, res.output
    assert "--conf nests more than 64 levels deep" in res.output
    assert "STATEWRIGHT_MAX_INPUT_DEPTH" in res.output
    res = run(env, "dags", "trigger", "good", "--conf", json.dumps({"k": list(range(200))}))
    assert res.exit_code == 1 and "STATEWRIGHT_MAX_INPUT_ITEMS" in res.output
    assert "manual__" not in run(env, "dags", "runs", "good").output
    ok = run(env, "dags", "trigger", "good", "--conf", json.dumps({"k": list(range(20))}))
    assert ok.exit_code == 0, ok.output
