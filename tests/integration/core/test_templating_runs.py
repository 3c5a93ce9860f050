"""Templating and params in whole runs (SQLite and PostgreSQL): rendered fields stored per try,
Airflow's tutorial DAG, run conf validated before a run exists."""

from __future__ import annotations

import runpy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from tests.airflow_examples import airflow_example

from statewright.core.params import ParamValidationError
from statewright.db.repositories import rendered_fields as rendered_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.tables import dag_run
from statewright.sdk import DAG, BashOperator, Param, PythonOperator, task

WHEN = datetime(2024, 3, 5, 6, tzinfo=UTC)


def _rendered(engine: Engine, run_id: str, dag_id: str, task_id: str) -> list[Any]:
    from statewright.db.repositories import task_instances as ti_repo

    with engine.connect() as conn:
        run = run_repo.get_by_run_id(conn, dag_id, run_id)
        ti = ti_repo.get_by_key(conn, run.id, task_id)
        return rendered_repo.for_task_instance(conn, ti.id)


def test_airflows_tutorial_dag_runs_with_only_its_imports_changed(engine: Engine) -> None:
    dag = runpy.run_path(str(airflow_example("core/tutorial.py")))["dag"]
    result = dag.test(engine=engine, logical_date=WHEN)
    assert result.states == {"print_date": "success", "sleep": "success",
                             "templated": "success"}
    [stored] = _rendered(engine, result.run_id, "tutorial", "templated")
    command = stored.rendered_fields["bash_command"]
    assert command.count('echo "2024-03-05"') == 5
    assert command.count('echo "2024-03-12"') == 5
    assert "{{" not in command and "{%" not in command
    assert result.ti("templated").return_value == "2024-03-12"


def test_rendered_fields_are_stored_for_each_try(engine: Engine) -> None:
    with DAG("retrying", schedule=None) as dag:
        BashOperator(task_id="b", retries=1, retry_delay=0,
                     bash_command='echo "{{ ti.try_number }} {{ ds }}"; '
                                  '[ "{{ ti.try_number }}" = "2" ]')
    result = dag.test(engine=engine, logical_date=WHEN)
    assert result.states == {"b": "success"}
    tries = _rendered(engine, result.run_id, "retrying", "b")
    assert [(t.try_number, t.rendered_fields["bash_command"].split(";")[0]) for t in tries] == [
        (1, 'echo "1 2024-03-05"'), (2, 'echo "2 2024-03-05"')]
    assert tries[0].rendered_fields == {"bash_command": tries[0].rendered_fields["bash_command"],
                                        "env": None, "cwd": None}


def test_a_render_error_fails_the_try_and_stores_nothing(engine: Engine) -> None:
    ran: list[str] = []
    with DAG("broken", schedule=None) as dag:
        PythonOperator(task_id="p", python_callable=lambda x: ran.append(x),
                       op_kwargs={"x": "{{ params.missing }}"})
    result = dag.test(engine=engine, logical_date=WHEN)
    assert result.states == {"p": "failed"}
    assert "task 'p', field 'op_kwargs'" in result.ti("p").state_message
    assert "no attribute 'missing'" in result.ti("p").state_message
    assert ran == []
    assert _rendered(engine, result.run_id, "broken", "p") == []


def test_params_reach_tasks_and_bad_conf_creates_no_run(engine: Engine) -> None:
    seen: list[Any] = []
    with DAG("p", schedule=None, params={"n": Param(1, type="integer", minimum=0),
                                         "label": Param("x", enum=["x", "y"])}) as dag:
        @task
        def show(params: dict[str, Any] | None = None) -> None:
            seen.append(dict(params or {}))

        show()
    assert dag.test(engine=engine, run_conf={"n": 4}).states == {"show": "success"}
    assert dag.test(engine=engine, conf={"label": "y"}, run_id="r2").states == {
        "show": "success"}
    assert seen == [{"n": 4, "label": "x"}, {"n": 1, "label": "y"}]
    with pytest.raises(ParamValidationError) as info:
        dag.test(engine=engine, run_conf={"n": -1, "label": "z"}, run_id="r3")
    assert [p.param for p in info.value.problems] == ["n", "label"]
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(dag_run)).scalar() == 2


def test_conf_and_run_conf_together_must_agree() -> None:
    from statewright.core.errors import DagDefinitionError

    with DAG("p", schedule=None) as dag:
        BashOperator(task_id="b", bash_command="true")
    with pytest.raises(DagDefinitionError, match="both conf= and run_conf="):
        dag.test(conf={"a": 1}, run_conf={"a": 2})


def test_prev_success_values_come_from_the_previous_successful_run(engine: Engine) -> None:
    # Starts before the third run's logical date: a run before the start has no task instance.
    with DAG("prev", schedule=timedelta(days=1), start_date=WHEN - timedelta(days=7)) as dag:
        BashOperator(task_id="b", bash_command="echo [{{ prev_start_date_success }}]"
                                                "[{{ prev_end_date_success is none }}]")
    first = dag.test(engine=engine, logical_date=WHEN, run_id="first")
    assert first.ti("b").return_value == "[None][True]"
    second = dag.test(engine=engine, logical_date=WHEN + timedelta(days=1), run_id="second")
    with engine.connect() as conn:
        earlier = run_repo.get_by_run_id(conn, "prev", "first")
    assert earlier.start_date is not None
    assert second.ti("b").return_value == f"[{earlier.start_date}][False]"
    # an earlier logical date does not see a later run
    third = dag.test(engine=engine, logical_date=WHEN - timedelta(days=1), run_id="third")
    assert third.ti("b").return_value == "[None][True]"
