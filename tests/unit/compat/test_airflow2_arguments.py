"""Airflow 2's DAG and task arguments, renamed or dropped by the layer (airflow2.py's tables),
and the one rule for the defaults that differ (STATEWRIGHT_AIRFLOW2_DEFAULTS)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import statewright.sdk
from statewright.compat import airflow as compat
from statewright.compat.airflow.adapt import airflow2_defaults, translate
from statewright.compat.airflow.airflow2 import TASK_ARGUMENTS
from statewright.core.errors import ConfigurationError, DagDefinitionError
from statewright.core.timetables import CronDataIntervalTimetable, DeltaDataIntervalTimetable
from statewright.sdk.loader import load_dag_file

START = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.fixture
def layer(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("STATEWRIGHT_AIRFLOW2_DEFAULTS", raising=False)
    with compat.activated():
        yield


@pytest.mark.parametrize("schedule", [timedelta(hours=2), "0 6 * * *", "@daily", None])
def test_schedule_interval_is_schedule(layer: None, schedule: Any) -> None:
    from airflow import DAG

    dag = DAG("d", schedule_interval=schedule, start_date=START)
    assert dag.schedule == schedule and isinstance(dag, statewright.sdk.DAG)
    assert type(dag).__name__ == "DAG"


def test_concurrency_is_max_active_tasks_and_the_new_name_wins(layer: None) -> None:
    from airflow.models import DAG

    assert DAG("d", concurrency=3).max_active_tasks == 3
    assert DAG("e", concurrency=3, max_active_tasks=5).max_active_tasks == 5


def test_airflow3_modules_keep_airflow3_arguments(layer: None) -> None:
    from airflow.sdk import DAG

    with pytest.raises(DagDefinitionError, match="schedule_interval"):
        DAG("d", schedule_interval="@daily")


def test_task_arguments_renamed_and_dropped(layer: None) -> None:
    from airflow import DAG
    from airflow.operators.python_operator import PythonOperator

    with DAG("d", start_date=START, default_args={"task_concurrency": 2, "provide_context": True,
                                                  "email": ["x@example.com"], "sla": 60}) as dag:
        inherited = PythonOperator(task_id="inherited", python_callable=print)
        own = PythonOperator(task_id="own", python_callable=print, task_concurrency=4,
                             provide_context=True, email_on_failure=True,
                             templates_dict={"when": "{{ ds }}"})
    assert inherited.max_active_tis_per_dag == 2 and own.max_active_tis_per_dag == 4
    assert own.templates_dict == {"when": "{{ ds }}"}
    assert dag.default_args == {"max_active_tis_per_dag": 2, "email": ["x@example.com"]}
    assert own.email_on_failure is True and inherited.email == ["x@example.com"]
    assert type(own).__name__ == "PythonOperator"
    assert isinstance(own, statewright.sdk.operators.PythonOperator)


def test_an_argument_the_class_accepts_is_passed_through() -> None:
    assert translate({"sla": 5, "task_concurrency": 1}, TASK_ARGUMENTS,
                     frozenset({"sla"})) == {"sla": 5, "max_active_tis_per_dag": 1}
    assert translate({"sla": 5}, TASK_ARGUMENTS) == {}


def test_a_users_operator_on_airflow2_base_operator(layer: None) -> None:
    from airflow.models import BaseOperator
    from airflow.utils.decorators import apply_defaults

    class Shout(BaseOperator):
        @apply_defaults
        def __init__(self, word: str, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.word = word

        def execute(self, context: Any) -> str:
            return self.word.upper()

    from airflow import DAG

    with DAG("d", start_date=START):
        task = Shout(task_id="s", word="hi", task_concurrency=1, provide_context=True)
    assert task.max_active_tis_per_dag == 1 and task.word == "hi"
    with pytest.raises(DagDefinitionError, match="no_such_argument"):
        Shout(task_id="t", word="x", no_such_argument=1)


def test_dag_decorator_takes_airflow2_arguments(layer: None) -> None:
    from airflow.decorators import dag, task

    @dag(schedule_interval="@hourly", start_date=START, concurrency=2)
    def pipeline() -> None:
        @task
        def one() -> int:
            return 1

        one()

    built = pipeline()
    assert built.schedule == "@hourly" and built.max_active_tasks == 2


def test_a_dag_file_keeps_its_file_and_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    path = tmp_path / "af2.py"
    path.write_text(textwrap.dedent("""\
        from airflow import DAG
        from airflow.operators.bash_operator import BashOperator
        from airflow.utils.dates import days_ago

        with DAG("af2", schedule_interval="@daily", start_date=days_ago(1)) as dag:
            BashOperator(task_id="hello", bash_command="echo hi", task_concurrency=1)
        """))
    loaded = load_dag_file(path)
    assert loaded.error is None, loaded.error
    dag = loaded.dags["af2"]
    assert dag.fileloc == str(path)
    assert dag.get_task("hello").__dict__["defined_at"] == (str(path), 6)


def test_airflow3_defaults_unless_the_setting_says_airflow2(
        layer: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow import DAG
    from airflow.sdk import DAG as Airflow3DAG

    plain = DAG("plain", start_date=START)
    assert plain.catchup is False and plain.schedule is None
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW2_DEFAULTS", "true")
    old = DAG("old", start_date=START)
    assert old.catchup is True and isinstance(old.schedule, DeltaDataIntervalTimetable)
    assert old.schedule.delta == timedelta(days=1)
    cron = DAG("cron", start_date=START, schedule_interval="0 6 * * *", catchup=False)
    assert cron.catchup is False and isinstance(cron.schedule, CronDataIntervalTimetable)
    assert DAG("manual", start_date=START, schedule_interval=None).schedule is None
    assert DAG("once", start_date=START, schedule="@once").schedule == "@once"
    new = Airflow3DAG("new", start_date=START)
    assert new.catchup is False and new.schedule is None


def test_the_defaults_setting_is_a_boolean() -> None:
    assert airflow2_defaults({"STATEWRIGHT_AIRFLOW2_DEFAULTS": "yes"}) is True
    assert airflow2_defaults({}) is False
    with pytest.raises(ConfigurationError, match="STATEWRIGHT_AIRFLOW2_DEFAULTS"):
        airflow2_defaults({"STATEWRIGHT_AIRFLOW2_DEFAULTS": "maybe"})


def test_airflow2_attribute_names_read_the_airflow3_ones(layer: None) -> None:
    from airflow import DAG
    from airflow.operators.bash_operator import BashOperator

    with DAG("d", schedule_interval="@daily", start_date=START, concurrency=2) as dag:
        task = BashOperator(task_id="b", bash_command="true", task_concurrency=3)
    assert dag.schedule_interval == "@daily" and dag.concurrency == 2
    assert task.task_concurrency == 3


def test_trigger_dagrun_execution_date_is_logical_date(layer: None) -> None:
    from airflow import DAG
    from airflow.operators.dagrun_operator import TriggerDagRunOperator

    with DAG("d", start_date=START):
        task = TriggerDagRunOperator(task_id="t", trigger_dag_id="other",
                                     execution_date="{{ ds }}")
    assert task.logical_date == "{{ ds }}"


def test_dataset_schedules_and_outlets_are_assets(layer: None) -> None:
    from airflow import DAG, Dataset
    from airflow.datasets import DatasetAll
    from airflow.operators.bash_operator import BashOperator

    from statewright.sdk import Asset, AssetAll

    with DAG("consumer", start_date=START,
             schedule=DatasetAll(Dataset("s3://b/x"), Dataset("s3://b/y"))) as dag:
        task = BashOperator(task_id="t", bash_command="true", outlets=[Dataset("s3://b/z")])
    assert isinstance(dag.schedule, AssetAll)
    assert task.outlets == [Asset("s3://b/z")]
    listed = DAG("listed", start_date=START, schedule=[Dataset("s3://b/x")])
    assert listed.schedule is not None


def test_mapped_tasks_take_airflow2_arguments_in_partial(layer: None) -> None:
    from airflow import DAG
    from airflow.operators.bash_operator import BashOperator

    with DAG("d", start_date=START):
        mapped = BashOperator.partial(task_id="b", task_concurrency=2, provide_context=True
                                      ).expand(bash_command=["echo 1", "echo 2"])
    assert mapped.max_active_tis_per_dag == 2


def test_an_operator_may_set_attributes_of_those_names_itself(layer: None) -> None:
    from airflow import DAG
    from airflow.models import BaseOperator

    class Pool(BaseOperator):
        def __init__(self, concurrency: int, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.concurrency = concurrency  # an operator's own argument, not Airflow 2's
            self.task_concurrency = 9

        def execute(self, context: Any) -> None: ...

    with DAG("d", start_date=START):
        task = Pool(task_id="p", concurrency=4)
    assert task.concurrency == 4 and task.task_concurrency == 9
    assert task.max_active_tis_per_dag is None
