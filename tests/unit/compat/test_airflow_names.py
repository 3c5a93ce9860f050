"""The name map is data that stays true: every rename points at an object that exists, every
answered Airflow module resolves its usual names, and provider packages are named right."""

from __future__ import annotations

import importlib

import pytest

from statewright.compat.airflow.names import MODULES, RENAMES, known_module, provider_package
from statewright.compat.airflow.resolver import has, lookup


@pytest.mark.parametrize("airflow_name", sorted(RENAMES))
def test_every_rename_points_at_a_statewright_object(airflow_name: str) -> None:
    where, _, name = RENAMES[airflow_name].partition(":")
    assert hasattr(importlib.import_module(where), name), RENAMES[airflow_name]
    module, _, attribute = airflow_name.rpartition(".")
    assert known_module(module) and has(module, attribute)


@pytest.mark.parametrize("module, name", [
    ("airflow.sdk", "DAG"), ("airflow.sdk", "dag"), ("airflow.sdk", "task"),
    ("airflow.sdk", "BaseOperator"), ("airflow.sdk", "chain"), ("airflow.sdk", "XComArg"),
    ("airflow.sdk", "get_current_context"), ("airflow.sdk", "TriggerRule"),
    ("airflow.sdk", "setup"), ("airflow.sdk", "teardown"), ("airflow.sdk", "PokeReturnValue"),
    ("airflow.sdk", "BaseSensorOperator"), ("airflow.sdk", "Context"),
    ("airflow.decorators", "task"), ("airflow.models", "DAG"),
    ("airflow.models.baseoperator", "chain"), ("airflow.models.xcom_arg", "XComArg"),
    ("airflow.operators.bash", "BashOperator"), ("airflow.operators.python", "PythonOperator"),
    ("airflow.operators.empty", "EmptyOperator"),
    ("airflow.providers.standard.operators.python", "BranchPythonOperator"),
    ("airflow.providers.standard.operators.python", "ShortCircuitOperator"),
    ("airflow.providers.standard.sensors.external_task", "ExternalTaskSensor"),
    ("airflow.providers.standard.sensors.filesystem", "FileSensor"),
    ("airflow.providers.standard.sensors.python", "PythonSensor"),
    ("airflow.providers.standard.sensors.date_time", "DateTimeSensor"),
    ("airflow.providers.standard.triggers.temporal", "TimeDeltaTrigger"),
    ("airflow.sensors.base", "BaseSensorOperator"), ("airflow.triggers.base", "BaseTrigger"),
    ("airflow.triggers.base", "TriggerEvent"), ("airflow.exceptions", "AirflowSkipException"),
    ("airflow.exceptions", "AirflowFailException"), ("airflow.exceptions", "AirflowException"),
    ("airflow.exceptions", "AirflowSensorTimeout"), ("airflow.exceptions", "TaskDeferred"),
    ("airflow.utils.trigger_rule", "TriggerRule"), ("airflow.utils.state", "TaskInstanceState"),
    ("airflow.utils.state", "DagRunState"),
    ("airflow.providers.common.compat.sdk", "TriggerRule"),
])
def test_the_usual_names_resolve(module: str, name: str) -> None:
    assert known_module(module) and has(module, name)


def test_a_module_resolves_to_an_object_never_to_a_statewright_module() -> None:
    # statewright.sdk has a submodule named ``operators``: ``from airflow import operators``
    # must not hand it out as if it were Airflow's package of that name.
    assert not isinstance(lookup("airflow.sdk", "operators"), type(importlib))


def test_every_answered_module_is_a_dotted_airflow_name() -> None:
    for module, places in MODULES.items():
        assert module == "airflow" or module.startswith("airflow."), module
        assert places and all(p.startswith("statewright.") for p in places), module


@pytest.mark.parametrize("module, package", [
    ("airflow.providers.amazon.aws.operators.s3", "apache-airflow-providers-amazon"),
    ("airflow.providers.cncf.kubernetes.operators.pod",
     "apache-airflow-providers-cncf-kubernetes"),
    ("airflow.providers.apache.spark.operators.spark_submit",
     "apache-airflow-providers-apache-spark"),
    ("airflow.providers.common.sql.operators.sql", "apache-airflow-providers-common-sql"),
    ("airflow.models.dag", None),
])
def test_provider_packages(module: str, package: str | None) -> None:
    assert provider_package(module) == package
