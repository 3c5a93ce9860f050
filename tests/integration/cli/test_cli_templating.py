"""``statewright tasks render`` and ``dags trigger --conf`` checked against the params."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from statewright.cli.main import cli

DAG_FILE = textwrap.dedent('''
    from statewright.sdk import DAG, BashOperator, Param
    with DAG("rendered", schedule=None, params={"n": Param(1, type="integer")}) as dag:
        BashOperator(task_id="b", bash_command="echo {{ ds }} {{ params.n }}",
                     env={"X": "{{ macros.ds_add(ds, 1) }}"})
        BashOperator(task_id="bad", bash_command="echo {{ nope }}")
''')


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "rendered.py").write_text(DAG_FILE)
    return {"STATEWRIGHT_HOME": str(tmp_path / "home"), "STATEWRIGHT_DAGS_FOLDER": str(dags),
            "STATEWRIGHT_DATABASE_URL": ""}


def run(env: dict[str, str], *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_tasks_render_prints_each_field(env: dict[str, str]) -> None:
    out = run(env, "tasks", "render", "rendered", "b", "--logical-date", "2024-03-05",
              "--conf", '{"n": 7}')
    assert out.exit_code == 0, out.output
    assert "# property: bash_command" in out.output
    assert "echo 2024-03-05 7" in out.output
    assert "{'X': '2024-03-06'}" in out.output


def test_tasks_render_errors(env: dict[str, str]) -> None:
    bad = run(env, "tasks", "render", "rendered", "bad")
    assert bad.exit_code == 1 and "'nope' is undefined" in bad.output
    assert "field 'bash_command'" in bad.output
    conf = run(env, "tasks", "render", "rendered", "b", "--conf", '{"n": "x"}')
    assert conf.exit_code == 1 and "param 'n'" in conf.output
    date = run(env, "tasks", "render", "rendered", "b", "--logical-date", "soon")
    assert date.exit_code == 1 and "--logical-date 'soon'" in date.output
    unknown = run(env, "tasks", "render", "nodag", "b")
    assert unknown.exit_code == 1 and "No DAG with id 'nodag'" in unknown.output


def test_trigger_conf_is_checked_against_the_params(env: dict[str, str]) -> None:
    bad = run(env, "dags", "trigger", "rendered", "--conf", '{"n": "x"}')
    assert bad.exit_code == 1 and "param 'n'" in bad.output
    assert "is not of type 'integer'" in bad.output
    good = run(env, "dags", "trigger", "rendered", "--conf", '{"n": 3}', "--run-id", "r1")
    assert good.exit_code == 0 and "r1" in good.output
