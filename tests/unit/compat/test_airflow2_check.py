"""`statewright dags check --airflow` names each Airflow 2 construct and what it becomes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from statewright.cli.main import cli
from statewright.compat.airflow.scan import scan_source

AIRFLOW2 = """\
from datetime import timedelta
from airflow import DAG
from airflow.datasets import Dataset
from airflow.operators.bash_operator import BashOperator
from airflow.operators.dummy_operator import DummyOperator
from airflow.operators.python_operator import PythonOperator
from airflow.operators.subdag import SubDagOperator
from airflow.utils.dates import days_ago

default_args = {"owner": "me", "task_concurrency": 2, "email_on_failure": True}


def report(execution_date, **context):
    return context["next_ds"]


with DAG("af2", default_args=default_args, schedule_interval="0 6 * * *",
         start_date=days_ago(2), concurrency=4) as dag:
    a = BashOperator(task_id="a", bash_command="echo {{ execution_date }} {{ prev_ds_nodash }}",
                     outlets=[Dataset("s3://b/k")])
    b = PythonOperator(task_id="b", python_callable=report, provide_context=True)
    a >> b >> DummyOperator(task_id="c")

DAG("other", start_date=days_ago(1), timetable=None, catchup=True)
"""


def constructs(source: str) -> dict[tuple[int, str], str]:
    return {(c.line, c.construct): c.becomes for c in scan_source(source).airflow2}


def test_each_airflow2_construct_is_named_with_what_it_becomes() -> None:
    found = constructs(AIRFLOW2)
    assert found[(3, "module airflow.datasets")] == "airflow.sdk (Airflow 3)"
    assert found[(3, "Dataset")] == "Asset"
    assert found[(4, "module airflow.operators.bash_operator")] == \
        "airflow.providers.standard.operators.bash (Airflow 3)"
    assert found[(5, "DummyOperator")] == "EmptyOperator"
    assert found[(10, "'task_concurrency' (a dict key: default_args)")] == \
        "'max_active_tis_per_dag' (Airflow 3)"
    assert (10, "'email_on_failure' (a dict key: default_args)") not in found  # Airflow 3 too
    assert found[(13, "parameter execution_date")] == "logical_date"
    assert found[(14, "['next_ds']")].startswith("next_execution_date")
    assert found[(17, "schedule_interval=")].startswith("schedule= (Airflow 3): runs at each cron")
    assert "STATEWRIGHT_AIRFLOW2_DEFAULTS=true" in found[(17, "schedule_interval=")]
    assert found[(18, "days_ago(2)")].startswith("a start date of midnight UTC")
    assert found[(18, "concurrency=")] == "max_active_tasks= (Airflow 3)"
    assert found[(17, "no catchup=")].startswith("catchup=False (Airflow 3's default")
    assert found[(19, "{{ execution_date }}")] == "logical_date"
    assert (19, "{{ prev_ds_nodash }}") in found
    assert found[(21, "provide_context=")].startswith("accepted and ignored")
    assert found[(24, "timetable=")] == "schedule= (Airflow 3)"
    assert (24, "no catchup=") not in found and (24, "no schedule") not in found


def test_a_dag_without_schedule_is_told_the_default_rule() -> None:
    found = constructs("from airflow.models import DAG\nd = DAG('x', catchup=False)\n")
    assert found[(2, "no schedule")].startswith("schedule=None: manual runs only")
    assert (2, "no catchup=") not in found


def test_an_airflow3_file_has_no_airflow2_constructs() -> None:
    source = textwrap.dedent("""\
        from airflow.sdk import DAG, Asset
        from airflow.providers.standard.operators.bash import BashOperator
        with DAG("new", schedule=[Asset("s3://b/k")]):
            BashOperator(task_id="a", bash_command="echo {{ ds }}")
        """)
    assert scan_source(source).airflow2 == []


def test_check_json_and_table_list_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW2_DEFAULTS", "false")
    path = tmp_path / "af2.py"
    path.write_text(AIRFLOW2)
    result = CliRunner().invoke(cli, ["dags", "check", "--airflow", str(path), "-o", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)["files"][0]
    assert report["loads"] is True and report["dags"] == {"af2": 3}
    entry = {"line": 17, "construct": "schedule_interval=",
             "becomes": next(c["becomes"] for c in report["airflow2"]
                             if c["construct"] == "schedule_interval=")}
    assert entry in report["airflow2"]
    table = CliRunner().invoke(cli, ["dags", "check", "--airflow", str(path)],
                               env={"COLUMNS": "200"})
    assert "Airflow 2 constructs" in table.output
    assert "schedule_interval=" in table.output and "max_active_tasks=" in table.output


def test_airflow2_paths_of_standard_operators_are_named() -> None:
    found = constructs("from airflow.operators.bash import BashOperator\n"
                       "import airflow.sensors.python\n")
    assert found[(1, "module airflow.operators.bash")] == \
        "airflow.providers.standard.operators.bash (Airflow 3)"
    assert found[(2, "module airflow.sensors.python")] == \
        "airflow.providers.standard.sensors.python (Airflow 3)"
