"""The command line with mapped tasks: states and history show the map index, clear and mark
take ``--map-index``, ``tasks why`` asks for one."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from statewright.cli.main import cli
from statewright.sdk.loader import load_dag_file

MAPPED = textwrap.dedent('''
    from statewright.sdk import DAG, task
    with DAG("mapped") as dag:
        @task(map_index_template="{{ task.op_kwargs['x'] }}-th")
        def square(x):
            return x * x
        square.expand(x=[1, 2, 3])
''')


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "mapped.py").write_text(MAPPED)
    return {"STATEWRIGHT_HOME": str(tmp_path / "home"), "STATEWRIGHT_DAGS_FOLDER": str(dags),
            "STATEWRIGHT_DATABASE_URL": "", "COLUMNS": "200"}


def run(env: dict[str, str], *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_states_history_clear_and_why_per_map_index(env: dict[str, str]) -> None:
    tested = run(env, "dags", "test", "mapped")
    assert tested.exit_code == 0, tested.output
    assert "square[2]" in tested.output
    # A run in the database the commands read.
    dag = load_dag_file(Path(env["STATEWRIGHT_DAGS_FOLDER"]) / "mapped.py").dags["mapped"]
    run_id = dag.test(
        database_url=f"sqlite:///{env['STATEWRIGHT_HOME']}/statewright.db").run_id

    states = json.loads(run(env, "tasks", "states", run_id, "-o", "json").output)
    assert sorted((t["map_index"], t["rendered_map_index"], t["state"])
                  for t in states["task_instances"]) == [
        (0, "1-th", "success"), (1, "2-th", "success"), (2, "3-th", "success")]
    table = run(env, "tasks", "states", run_id).output
    assert "map_index" in table and "2 3-th" in table

    one = run(env, "tasks", "history", run_id, "square", "--map-index", "1").output
    assert "(created)" in one and "success" in one
    indexes = {cells[2].strip() for line in one.splitlines()
               if len(cells := line.split("│")) > 3}
    assert indexes == {"1"}
    assert run(env, "tasks", "history", run_id, "square", "--map-index", "9").exit_code != 0

    dry = run(env, "tasks", "clear", run_id, "-t", "square", "--map-index", "2", "--dry-run")
    assert dry.exit_code == 0 and "square[2]" in dry.output and "square[0]" not in dry.output
    marked = run(env, "tasks", "mark-failed", run_id, "square", "--map-index", "0", "-y")
    assert marked.exit_code == 0 and "square[0]" in marked.output

    why = run(env, "tasks", "why", run_id, "square")
    assert why.exit_code != 0 and "--map-index" in why.output
    assert run(env, "tasks", "why", run_id, "square", "--map-index", "0").exit_code == 0
