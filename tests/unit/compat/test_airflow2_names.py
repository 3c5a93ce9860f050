"""Airflow 2's modules and names resolve through the layer to what Airflow 3 calls them."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

import statewright.sdk
from statewright.compat import airflow as compat
from statewright.compat.airflow import AirflowModuleMissing
from statewright.compat.airflow.adapt import original_of
from statewright.compat.airflow.airflow2 import MOVED_MODULES
from statewright.compat.airflow.legacy import dates
from statewright.compat.airflow.names import provider_package
from statewright.core.errors import ConfigurationError
from statewright.sdk import operators, sensors


@pytest.fixture
def layer() -> Iterator[None]:
    with compat.activated():
        yield


def name(module: str, attribute: str) -> object:
    return original_of(getattr(importlib.import_module(module), attribute))


@pytest.mark.parametrize(("module", "attribute", "ours"), [
    ("airflow.operators.bash_operator", "BashOperator", operators.BashOperator),
    ("airflow.operators.python_operator", "PythonOperator", operators.PythonOperator),
    ("airflow.operators.python_operator", "BranchPythonOperator", operators.BranchPythonOperator),
    ("airflow.operators.dummy_operator", "DummyOperator", operators.EmptyOperator),
    ("airflow.operators.dummy", "DummyOperator", operators.EmptyOperator),
    ("airflow.operators.dagrun_operator", "TriggerDagRunOperator",
     operators.TriggerDagRunOperator),
    ("airflow.operators.latest_only_operator", "LatestOnlyOperator",
     operators.LatestOnlyOperator),
    ("airflow.sensors.external_task_sensor", "ExternalTaskSensor", sensors.ExternalTaskSensor),
    ("airflow.sensors.time_delta_sensor", "TimeDeltaSensor", sensors.TimeDeltaSensor),
    ("airflow.sensors.date_time_sensor", "DateTimeSensor", sensors.DateTimeSensor),
    ("airflow.sensors.base_sensor_operator", "BaseSensorOperator", sensors.BaseSensorOperator),
    ("airflow.models", "DAG", statewright.sdk.DAG),
    ("airflow.models", "BaseOperator", statewright.sdk.BaseOperator),
    ("airflow.models", "Variable", statewright.sdk.Variable),
    ("airflow.models", "Param", statewright.sdk.Param),
    ("airflow.utils.task_group", "TaskGroup", statewright.sdk.TaskGroup),
    ("airflow.datasets", "Dataset", statewright.sdk.Asset),
    ("airflow.datasets", "DatasetAlias", statewright.sdk.AssetAlias),
    ("airflow.datasets", "DatasetAll", statewright.sdk.AssetAll),
    ("airflow.datasets", "DatasetAny", statewright.sdk.AssetAny),
    ("airflow", "Dataset", statewright.sdk.Asset),
])
def test_an_airflow2_name_is_its_airflow3_object(
        layer: None, module: str, attribute: str, ours: object) -> None:
    assert name(module, attribute) is ours


def test_sql_modules_of_airflow2_are_common_sql_provider_classes(layer: None) -> None:
    from statewright.providers.common.sql.operators.sql import SQLExecuteQueryOperator
    from statewright.providers.common.sql.sensors.sql import SqlSensor

    assert name("airflow.sensors.sql", "SqlSensor") is SqlSensor
    assert name("airflow.sensors.sql_sensor", "SqlSensor") is SqlSensor
    assert name("airflow.operators.sql", "SQLExecuteQueryOperator") is SQLExecuteQueryOperator


def test_models_and_settings_import_as_modules_of_the_airflow_package(layer: None) -> None:
    from airflow import models, settings

    assert original_of(models.DAG) is statewright.sdk.DAG
    assert models.Variable is statewright.sdk.Variable
    assert isinstance(settings.DAGS_FOLDER, str)


def test_trigger_rule_and_state_constants(layer: None) -> None:
    from airflow.utils.state import State
    from airflow.utils.trigger_rule import TriggerRule

    assert TriggerRule.ALL_DONE == "all_done" and TriggerRule.NONE_FAILED == "none_failed"
    assert State.SUCCESS == "success" and State.NONE is None
    assert State.FAILED in State.failed_states and State.RUNNING in State.unfinished


def test_airflow_1_10_spellings_found_in_airflow2_folders(layer: None) -> None:
    from statewright.providers.ssh.operators.ssh import SSHOperator

    assert name("airflow.operators.sensors", "ExternalTaskSensor") is sensors.ExternalTaskSensor
    assert name("airflow.contrib.sensors.file_sensor", "FileSensor") is sensors.FileSensor
    assert name("airflow.contrib.operators.ssh_operator", "SSHOperator") is SSHOperator
    with pytest.raises(AirflowModuleMissing, match="apache-airflow-providers-apache-spark"):
        importlib.import_module("airflow.contrib.operators.spark_submit_operator")


def test_docker_operator_is_the_docker_providers(layer: None) -> None:
    from statewright.providers.docker.operators.docker import DockerOperator

    assert name("airflow.operators.docker_operator", "DockerOperator") is DockerOperator
    assert name("airflow.providers.docker.operators.docker", "DockerOperator") is DockerOperator


def test_email_operator_is_the_smtp_providers_once_it_exists(layer: None) -> None:
    ours = "statewright.providers.smtp.operators.smtp"
    try:
        present = importlib.util.find_spec(ours) is not None
    except ModuleNotFoundError:
        present = False
    if present:
        assert name("airflow.operators.email", "EmailOperator") is \
            importlib.import_module(ours).EmailOperator
    else:
        with pytest.raises(AirflowModuleMissing, match="apache-airflow-providers-smtp"):
            importlib.import_module("airflow.operators.email")


def test_days_ago_is_midnight_utc_n_days_back(
        layer: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.utils.dates import days_ago

    monkeypatch.setattr(dates, "now", lambda: datetime(2024, 3, 10, 15, 30, tzinfo=UTC))
    assert days_ago(2) == datetime(2024, 3, 8, tzinfo=UTC)
    assert days_ago(0, hour=6) == datetime(2024, 3, 10, 6, tzinfo=UTC)


def test_apply_defaults_leaves_the_init_as_it_is(layer: None) -> None:
    from airflow.utils.decorators import apply_defaults

    def init() -> None: ...

    assert apply_defaults(init) is init


def test_conf_reads_statewrights_settings(
        layer: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from airflow.configuration import conf

    monkeypatch.setenv("STATEWRIGHT_DAGS_FOLDER", str(tmp_path / "dags"))
    monkeypatch.setenv("STATEWRIGHT_HOME", str(tmp_path / "home"))
    assert conf.get("core", "dags_folder") == str(tmp_path / "dags")
    assert conf.get("CORE", "airflow_home") == str(tmp_path / "home")
    assert conf.getboolean("core", "load_examples") is False
    assert conf.getint("core", "parallelism") == 8
    assert conf.get("core", "no_such_option", fallback="x") == "x"
    monkeypatch.setenv("AIRFLOW__CORE__NO_SUCH_OPTION", "from-env")
    assert conf.get("core", "no_such_option") == "from-env"
    assert conf.has_option("core", "no_such_option")
    with pytest.raises(ConfigurationError, match=r"\[smtp\] smtp_host"):
        conf.get("smtp", "smtp_host")


def test_settings_are_read_when_asked(
        layer: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from statewright.compat.airflow.legacy import settings

    monkeypatch.setenv("STATEWRIGHT_DAGS_FOLDER", str(tmp_path / "a"))
    assert settings.DAGS_FOLDER == str(tmp_path / "a")
    monkeypatch.setenv("STATEWRIGHT_HOME", str(tmp_path / "h"))
    assert settings.AIRFLOW_HOME == str(tmp_path / "h")
    assert settings.TIMEZONE is UTC


def test_subdag_operator_is_answered(layer: None) -> None:
    from statewright.compat.airflow.legacy.subdag import SubDagOperator

    assert name("airflow.operators.subdag", "SubDagOperator") is SubDagOperator
    assert name("airflow.operators.subdag_operator", "SubDagOperator") is SubDagOperator


@pytest.mark.parametrize("module", sorted(MOVED_MODULES))
def test_every_moved_module_loads_or_names_its_provider(layer: None, module: str) -> None:
    target = MOVED_MODULES[module]
    try:
        loaded = importlib.import_module(module)
    except AirflowModuleMissing as exc:
        package = provider_package(target)
        assert package is not None and package in str(exc) and module in str(exc)
    else:
        assert loaded.__name__ == module


def test_cron_presets_of_airflow2(layer: None) -> None:
    from airflow.utils.dates import cron_presets

    assert cron_presets["@daily"] == "0 0 * * *" and cron_presets["@hourly"] == "0 * * * *"


def test_xcom_is_the_configured_backend_class(
        layer: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from statewright.sdk.xcom_backend import BaseXCom

    monkeypatch.delenv("STATEWRIGHT_XCOM_BACKEND", raising=False)
    assert name("airflow.models", "XCom") is BaseXCom
    assert name("airflow.models.xcom", "XCom") is BaseXCom


def test_airflow2_decorator_names_are_kinds_of_task(layer: None) -> None:
    from airflow.decorators import branch_task, python_task, short_circuit_task

    assert branch_task == statewright.sdk.task.branch  # bound methods: equal, not identical
    assert python_task == statewright.sdk.task.python
    assert short_circuit_task == statewright.sdk.task.short_circuit
