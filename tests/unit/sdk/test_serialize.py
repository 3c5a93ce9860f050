from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG, BashOperator, EmptyOperator, PythonOperator

DAG_KEYS = {
    "dag_id", "fileloc", "description", "doc_md", "schedule", "start_date", "end_date",
    "timezone", "catchup", "max_active_runs", "max_active_tasks", "fail_stop", "params",
    "params_spec", "tags",
    "is_paused_upon_creation", "dagrun_timeout", "has_on_success_callback",
    "has_on_failure_callback", "tasks", "task_groups", "edge_info",
}  # fmt: skip
TASK_KEYS = {
    "task_id", "operator", "upstream", "downstream", "trigger_rule", "retries", "retry_delay",
    "retry_exponential_backoff", "max_retry_delay", "execution_timeout", "priority_weight",
    "weight_rule", "pool", "pool_slots", "queue", "max_active_tis_per_dag",
    "max_active_tis_per_dagrun", "depends_on_past",
    "is_sensor", "deferrable", "has_callbacks", "is_setup", "is_teardown",
    "on_failure_fail_dagrun", "task_group",
}  # fmt: skip


def _cb(context):
    return None


def _sample_dag() -> DAG:
    with DAG(
        "sample",
        description="a sample",
        schedule="0 6 * * *",
        start_date=datetime(2024, 1, 1),
        end_date=datetime(2025, 1, 1),
        timezone="Europe/Paris",
        catchup=True,
        max_active_runs=2,
        max_active_tasks=4,
        fail_fast=True,
        params={"n": 3},
        tags=["etl"],
        is_paused_upon_creation=False,
        on_failure_callback=_cb,
        dagrun_timeout=timedelta(hours=1),
    ) as dag:
        extract = PythonOperator(
            task_id="extract",
            python_callable=print,
            retries=2,
            retry_delay=timedelta(seconds=30),
            retry_exponential_backoff=True,
            max_retry_delay=timedelta(minutes=10),
            execution_timeout=timedelta(minutes=5),
            priority_weight=5,
            weight_rule="absolute",
            pool="db",
            pool_slots=2,
            queue="io",
            max_active_tis_per_dag=1,
            depends_on_past=True,
            on_failure_callback=[_cb, _cb],
            on_retry_callback=_cb,
        )
        load = BashOperator(task_id="load", bash_command="true")
        start = EmptyOperator(task_id="start")
        start >> extract >> load
    return dag


def test_serialize_shape_and_values():
    data = _sample_dag().serialize()
    assert set(data) == DAG_KEYS
    assert data["dag_id"] == "sample"
    assert data["fileloc"].endswith("test_serialize.py")
    assert data["schedule"] == "0 6 * * *"
    assert data["timezone"] == "Europe/Paris"
    # a naive start_date is read in the DAG's timezone and stored in UTC
    assert data["start_date"] == "2023-12-31T23:00:00+00:00"
    assert data["end_date"] == "2024-12-31T23:00:00+00:00"
    assert (data["catchup"], data["max_active_runs"], data["max_active_tasks"]) == (True, 2, 4)
    assert data["fail_stop"] is True
    assert data["params"] == {"n": 3}
    assert data["tags"] == ["etl"]
    assert data["is_paused_upon_creation"] is False
    assert data["dagrun_timeout"] == 3600.0
    assert (data["has_on_success_callback"], data["has_on_failure_callback"]) == (False, True)

    assert [t["task_id"] for t in data["tasks"]] == ["start", "extract", "load"]
    extract = data["tasks"][1]
    assert set(extract) == TASK_KEYS
    assert extract == {
        "task_id": "extract",
        "task_group": None,
        "operator": "PythonOperator",
        "upstream": ["start"],
        "downstream": ["load"],
        "trigger_rule": "all_success",
        "retries": 2,
        "retry_delay": 30.0,
        "retry_exponential_backoff": True,
        "max_retry_delay": 600.0,
        "execution_timeout": 300.0,
        "priority_weight": 5,
        "weight_rule": "absolute",
        "pool": "db",
        "pool_slots": 2,
        "queue": "io",
        "max_active_tis_per_dag": 1,
        "max_active_tis_per_dagrun": None,
        "depends_on_past": True,
        "is_sensor": False,
        "deferrable": False,
        "is_setup": False,
        "is_teardown": False,
        "on_failure_fail_dagrun": False,
        "has_callbacks": {
            "on_execute": False,
            "on_success": False,
            "on_failure": True,
            "on_retry": True,
            "on_skipped": False,
            "on_state": False,
        },
    }
    load = data["tasks"][2]
    assert load["operator"] == "BashOperator"
    assert (load["pool"], load["queue"], load["retry_delay"]) == ("default_pool", "default", 300.0)
    assert (load["max_retry_delay"], load["execution_timeout"]) == (None, None)


def test_serialize_round_trips_through_json():
    data = _sample_dag().serialize()
    assert json.loads(json.dumps(data)) == data


def test_minimal_dag_defaults():
    data = DAG("empty").serialize()
    assert data["schedule"] is None and data["start_date"] is None
    assert data["timezone"] == "UTC"
    assert (data["catchup"], data["max_active_runs"], data["max_active_tasks"]) == (False, 16, 16)
    assert data["is_paused_upon_creation"] is None
    assert data["tasks"] == []


def test_timedelta_schedule_and_start_date_timezone():
    start = datetime(2024, 1, 1, tzinfo=ZoneInfo("America/New_York"))
    data = DAG("d", schedule=timedelta(hours=6), start_date=start).serialize()
    assert data["schedule"] == {"timedelta_seconds": 21600.0}
    assert data["timezone"] == "America/New_York"
    assert data["start_date"] == "2024-01-01T05:00:00+00:00"
    fixed = datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    assert DAG("e", start_date=fixed).serialize()["timezone"] == "+05:30"


def test_params_must_be_json():
    with pytest.raises(DagDefinitionError, match="params"):
        DAG("d", params={"when": datetime(2024, 1, 1)})


def test_unknown_timezone():
    with pytest.raises(DagDefinitionError, match="timezone"):
        DAG("d", timezone="Mars/Olympus")
