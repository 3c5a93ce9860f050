"""The official ``apache-airflow-client`` against a real statewright server (SQLite and
PostgreSQL) for /api/v2's task instance family: lists of every DAG and run (``~``) and their
batch forms, notes, mapped instances, the mark dry run, a full log, XCom writes, tasks, deleting
a run and a DAG. The client must read every answer (statewright's extra fields included)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from airflow_client_harness import client_python, run_calls, serving
from api_helpers import add_runs, chain_dag, store_dag
from sqlalchemy import Engine
from test_api_v2_client import _mapped_run

from statewright.config import Settings
from statewright.core.clock import utcnow
from statewright.services.auth.accounts import create_user


@pytest.fixture(scope="session")
def airflow_client() -> Path:
    return client_python()


@pytest.fixture
def answers(engine: Engine, settings: Settings, airflow_client: Path
            ) -> Iterator[dict[str, Any]]:
    run_id = _mapped_run(engine, settings.logs_folder)
    add_runs(engine, store_dag(engine, chain_dag("chain_v2", 1)), ["waiting"])
    create_user(engine, "ops", "password-ops", "operator", utcnow())
    with serving(engine, settings) as url:
        yield run_calls(airflow_client, url, "ops", "password-ops", "chain_v2", "mapped_v2",
                        run_id, "task_instances") | {"run_id": run_id}


@pytest.mark.slow  # a real server and the client in its own interpreter
def test_the_task_instance_family_through_the_official_client(answers: dict[str, Any]) -> None:
    a, run_id = answers, answers["run_id"]
    assert [(r["dag_id"], r["state"]) for r in a["all_runs"]["dag_runs"]] == [
        ("mapped_v2", "success")]
    assert [r["dag_run_id"] for r in a["runs_batch"]["dag_runs"]] == [run_id]
    assert a["all_tis"]["total_entries"] == 4  # the queued run's task instance has no state
    assert [t["map_index"] for t in a["tis_batch"]["task_instances"]] == [2, 1, 0]
    assert sorted((x["task_id"], x["map_index"]) for x in a["all_xcoms"]["xcom_entries"]) == [
        ("square", 0), ("square", 1), ("square", 2), ("total", -1)]
    assert (a["list_mapped"]["total_entries"],
            [t["map_index"] for t in a["list_mapped"]["task_instances"]]) == (3, [0, 1])
    assert sorted((t["task_id"], t["map_index"], t["state"])
                  for t in a["mark_dry_run"]["task_instances"]) == [
        ("square", 0, "success"), ("square", 1, "success"), ("square", 2, "success"),
        ("total", -1, "success")]  # a dry run changes nothing
    assert [t["map_index"] for t in a["mark_dry_run_mapped"]["task_instances"]] == [0]
    assert (a["run_note"]["note"], a["noted_run"]["note"]) == ("checked by ops",) * 2
    assert [t["note"] for t in a["ti_note"]["task_instances"]] == ["fine"]
    assert a["noted_ti"]["note"] == "fine"
    assert "squaring 3" in str(a["full_log"]["content"])
    assert (a["xcom_create"]["key"], a["xcom_create"]["value"]) == ("rows", 3)
    assert a["xcom_create_again"]["error"] == 409
    assert a["xcom_update"]["value"] == [1, 2]
    assert a["xcom_delete"] is None
    assert [t["task_id"] for t in a["tasks"]["tasks"]] == ["square", "total"]
    assert (a["task"]["task_id"], a["task"]["is_mapped"]) == ("square", True)
    assert a["delete_dag"]["error"] == 400 and "DAGs folder" in a["delete_dag"]["body"]
    assert a["delete_run"] is None
    assert a["deleted_run"]["error"] == 404
