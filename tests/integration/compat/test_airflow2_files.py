"""Airflow 2 DAG files, unedited, run through the layer: Airflow 2 spellings, context keys and
templates, and SubDagOperator's final states. SQLite and PostgreSQL."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.sdk.loader import load_dag_file

LOGICAL_DATE = datetime(2024, 3, 10, 6, tzinfo=UTC)

AIRFLOW2_FILE = """\
from datetime import timedelta

from airflow import DAG
from airflow.datasets import Dataset
from airflow.operators.bash_operator import BashOperator
from airflow.operators.dummy_operator import DummyOperator
from airflow.operators.python_operator import PythonOperator
from airflow.utils.dates import days_ago
from airflow.utils.trigger_rule import TriggerRule

default_args = {"owner": "airflow", "retries": 0, "retry_delay": timedelta(minutes=5),
                "provide_context": True, "email_on_failure": False, "task_concurrency": 2}


def report(execution_date, ds, **kwargs):
    return [execution_date.isoformat(), ds, kwargs["yesterday_ds"], kwargs["next_ds"],
            kwargs["prev_ds_nodash"], kwargs["templates_dict"]["tomorrow"]]


with DAG("airflow2_file", default_args=default_args, schedule_interval="@daily",
         start_date=days_ago(5000), concurrency=4) as dag:  # before LOGICAL_DATE
    start = DummyOperator(task_id="start")
    echo = BashOperator(task_id="echo", outlets=[Dataset("s3://bucket/out")],
                        bash_command="echo {{ execution_date.date() }} {{ tomorrow_ds_nodash }}")
    py = PythonOperator(task_id="py", python_callable=report, provide_context=True,
                        templates_dict={"tomorrow": "{{ tomorrow_ds }}"})
    end = DummyOperator(task_id="end", trigger_rule=TriggerRule.ALL_DONE)
    start >> echo >> py >> end
"""

SUBDAG_FILE = """\
from datetime import datetime

from airflow import DAG
from airflow.exceptions import AirflowSkipException
from airflow.operators.bash import BashOperator
from airflow.operators.dummy import DummyOperator
from airflow.operators.python import PythonOperator
from airflow.operators.subdag import SubDagOperator

ARGS = {"owner": "airflow", "start_date": datetime(2021, 1, 1)}


def skip():
    raise AirflowSkipException("nothing to do")


def subdag(parent, child, fail):
    with DAG(f"{parent}.{child}", default_args=ARGS, schedule_interval="@daily") as sub:
        one = DummyOperator(task_id="one")
        one >> PythonOperator(task_id="maybe_skip", python_callable=skip)
        if fail:
            one >> BashOperator(task_id="boom", bash_command="exit 1")
    return sub


with DAG("parent", default_args=ARGS, schedule_interval="@once") as dag:
    start = DummyOperator(task_id="start")
    section_1 = SubDagOperator(task_id="section-1", subdag=subdag("parent", "section-1", False))
    middle = DummyOperator(task_id="middle")
    section_2 = SubDagOperator(task_id="section-2", subdag=subdag("parent", "section-2", True))
    end = DummyOperator(task_id="end")
    start >> section_1 >> middle >> section_2 >> end
"""


@pytest.fixture(autouse=True)
def airflow_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    monkeypatch.delenv("STATEWRIGHT_AIRFLOW2_DEFAULTS", raising=False)


def _load(tmp_path: Path, source: str) -> dict[str, Any]:
    path = tmp_path / "dag_file.py"
    path.write_text(textwrap.dedent(source))
    loaded = load_dag_file(path)
    assert loaded.error is None, loaded.error
    return dict(loaded.dags)


def test_an_airflow2_file_runs_with_its_context_keys(engine: Engine, tmp_path: Path) -> None:
    dag = _load(tmp_path, AIRFLOW2_FILE)["airflow2_file"]
    assert dag.schedule == "@daily" and dag.max_active_tasks == 4 and dag.catchup is False
    run = dag.test(logical_date=LOGICAL_DATE, engine=engine)
    assert run.states == {"start": "success", "echo": "success", "py": "success",
                          "end": "success"}
    assert run.task_instances["echo"].return_value == "2024-03-10 20240311"
    # A manual run: Airflow 2 gave it its own date as the next and the previous one.
    assert run.task_instances["py"].return_value == [
        LOGICAL_DATE.isoformat(), "2024-03-10", "2024-03-09", "2024-03-10", "20240310",
        "2024-03-11"]


def test_subdag_operator_ends_as_in_airflow2(engine: Engine, tmp_path: Path) -> None:
    dags = _load(tmp_path, SUBDAG_FILE)
    assert list(dags) == ["parent"]  # the sub-DAGs are parts of it, not DAGs of their own
    run = dags["parent"].test(logical_date=LOGICAL_DATE, engine=engine)
    assert run.state == "failed"
    assert run.states == {
        "start": "success",
        "section-1.one": "success", "section-1.maybe_skip": "skipped",
        "section-1.subdag_done": "success",  # skipped inside: the sub-DAG still succeeded
        "middle": "success",
        "section-2.one": "success", "section-2.maybe_skip": "skipped",
        "section-2.boom": "failed", "section-2.subdag_done": "upstream_failed",
        "end": "upstream_failed",
    }
