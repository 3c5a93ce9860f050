"""Airflow 3.3's REST API under /api/v2, through the official ``apache-airflow-client`` in a
subprocess against a real statewright server, on SQLite and PostgreSQL: a team's script (token,
version, health, DAGs, pause, trigger, runs, task instances incl. mapped, XCom, a log, clear dry
run, connections, variables, pools, import errors, event logs, assets, backfills)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from airflow_client_harness import client_python, run_calls, serving
from api_helpers import store_dag
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.config import Settings
from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import import_errors
from statewright.sdk import DAG, Asset, task
from statewright.services.auth.accounts import create_user
from statewright.services.dag_processor.asset_refs import sync_dag_assets


@pytest.fixture(scope="session")
def airflow_client() -> Path:
    return client_python()


def _mapped_run(engine: Engine, logs: Path) -> str:
    with DAG("mapped_v2", tags=["v2"]) as dag:
        @task
        def square(x: int) -> int:
            print(f"squaring {x}")
            return x * x

        @task
        def total(values: Any) -> int:
            return sum(values)

        total(square.expand(x=[1, 2, 3]))
    result = dag.test(engine=engine, logs_folder=logs)
    assert result.state.value == "success"
    return result.run_id


def _seed(engine: Engine, url: str, admin: dict[str, str]) -> None:
    with DAG("daily_v2", schedule="@daily", start_date=datetime(2026, 1, 1, tzinfo=UTC),
             tags=["v2", "daily"], description="a daily pipeline") as dag:
        NoopOperator(task_id="publish", outlets=[Asset(name="orders", uri="s3://bucket/orders")])
    serialized = store_dag(engine, dag)
    with transaction(engine) as conn:
        sync_dag_assets(conn, [serialized], utcnow())
        import_errors.record(conn, "/dags/broken.py", "SyntaxError: invalid syntax", utcnow())
    for path, body in (
            ("connections", {"connection_id": "warehouse", "conn_type": "postgres",
                             "host": "db.internal", "login": "etl", "password": "s3cret",
                             "port": 5432}),
            ("variables", {"key": "region", "value": "eu-west-1"}),
            ("backfills", {"dag_id": "daily_v2", "from_date": "2026-01-01T00:00:00Z",
                           "to_date": "2026-01-02T00:00:00Z"})):
        answer = httpx.post(f"{url}/api/v1/{path}", json=body, headers=admin, timeout=10)
        assert answer.status_code < 300, answer.text


@pytest.fixture
def answers(engine: Engine, settings: Settings, airflow_client: Path,
            auth_headers: Callable[..., dict[str, str]]) -> Iterator[dict[str, Any]]:
    run_id = _mapped_run(engine, settings.logs_folder)
    create_user(engine, "ops", "password-ops", "admin", utcnow())
    with serving(engine, settings) as url:
        _seed(engine, url, auth_headers(engine))
        yield run_calls(airflow_client, url, "ops", "password-ops", "daily_v2", "mapped_v2",
                        run_id) | {"run_id": run_id}


@pytest.mark.slow  # a real server and the client in its own interpreter: ~10 s
def test_a_teams_script_runs_against_api_v2(answers: dict[str, Any]) -> None:
    a, run_id = answers, answers["run_id"]
    assert a["token_status"] == 201
    assert a["version"]["version"]
    assert a["health"]["metadatabase"]["status"] == "healthy"
    assert a["health"]["scheduler"]["status"] == "unhealthy"  # no scheduler heartbeats here

    assert [d["dag_id"] for d in a["list_dags"]["dags"]] == ["daily_v2", "mapped_v2"]
    assert a["list_dags"]["total_entries"] == 2
    daily = a["get_dag"]
    assert (daily["dag_id"], daily["description"], daily["is_paused"]) == (
        "daily_v2", "a daily pipeline", False)
    assert sorted(t["name"] for t in daily["tags"]) == ["daily", "v2"]
    details = a["dag_details"]
    assert (details["dag_id"], details["catchup"], details["active_runs_count"]) == (
        "daily_v2", False, 0)
    assert details["start_date"].startswith("2026-01-01")
    assert (a["pause"]["is_paused"], a["unpause"]["is_paused"]) == (True, False)

    run = a["trigger"]
    assert (run["dag_run_id"], run["state"], run["run_type"], run["conf"]) == (
        "from_client", "queued", "manual", {"source": "client"})
    assert run["logical_date"].startswith("2026-01-02 00:00:00")
    assert a["trigger_again"]["error"] == 409
    assert [r["dag_run_id"] for r in a["list_runs"]["dag_runs"]] == ["from_client"]
    assert a["get_run"]["dag_run_id"] == "from_client"
    assert (a["mark_run"]["dag_run_id"], a["mark_run"]["state"]) == ("from_client", "success")
    assert a["get_missing_run"]["error"] == 404
    assert '"detail"' in a["get_missing_run"]["body"]

    tis = a["list_tis"]["task_instances"]
    assert sorted((t["task_id"], t["map_index"], t["state"]) for t in tis) == [
        ("square", 0, "success"), ("square", 1, "success"), ("square", 2, "success"),
        ("total", -1, "success")]
    assert len({t["id"] for t in tis}) == 4
    assert (a["get_ti"]["task_id"], a["get_ti"]["map_index"]) == ("total", -1)
    assert (a["get_mapped_ti"]["task_id"], a["get_mapped_ti"]["map_index"]) == ("square", 2)
    assert [x["key"] for x in a["list_xcoms"]["xcom_entries"]] == ["return_value"]
    assert a["get_xcom"]["value"] == 14
    assert a["get_mapped_xcom"]["value"] == 9
    assert "squaring 2" in str(a["log"]["content"])
    cleared = a["clear_dry_run"]["task_instances"]
    assert [(t["task_id"], t["dag_run_id"]) for t in cleared] == [("total", run_id)]
    assert cleared[0]["state"] == "success"  # a dry run changes nothing

    would = a["clear_run_dry"]["task_instances"]
    assert sorted((t["task_id"], t["map_index"]) for t in would) == [
        ("square", 0), ("square", 1), ("square", 2), ("total", -1)]
    assert {t["state"] for t in would} == {"success"}
    assert [(t["task_id"], t["map_index"], t["try_number"], t["state"])
            for t in a["tries"]["task_instances"]] == [("square", 1, 1, "success")]
    assert (a["try"]["task_id"], a["try"]["try_number"]) == ("total", 1)
    marked = a["mark_ti"]["task_instances"]
    assert [(t["task_id"], t["map_index"], t["state"]) for t in marked] == [
        ("square", 1, "failed")]
    queued = a["clear_run"]
    assert (queued["dag_run_id"], queued["state"]) == (run_id, "queued")

    assert a["connections"]["connections"][0]["connection_id"] == "warehouse"
    assert (a["connection"]["host"], a["connection"]["password"]) == ("db.internal", "***")
    assert (a["create_connection"]["host"], a["create_connection"]["password"]) == (
        "example.org", "***")
    assert (a["patch_connection"]["host"], a["patch_connection"]["password"]) == (
        "api.example.org", "***")  # the password left out is kept
    assert a["delete_connection"] is None
    assert (a["create_variable"]["value"], a["create_variable"]["description"]) == (
        '{"rows": 10}', "json")
    assert a["create_variable_again"]["error"] == 409
    assert (a["patch_variable"]["value"], a["patch_variable"]["description"]) == ("20", "json")
    assert a["delete_variable"] is None
    assert a["variables"]["total_entries"] == 1
    assert (a["variable"]["key"], a["variable"]["value"]) == ("region", "eu-west-1")

    assert (a["create_pool"]["name"], a["create_pool"]["slots"]) == ("client_pool", 3)
    assert a["create_pool_again"]["error"] == 409
    assert (a["patch_pool"]["slots"], a["patch_pool"]["description"]) == (5, "from the client")
    assert a["get_pool"]["open_slots"] == 5
    assert {p["name"] for p in a["list_pools"]["pools"]} == {"client_pool", "default_pool"}
    assert a["delete_pool"] is None and a["get_deleted_pool"]["error"] == 404

    assert a["import_errors"]["import_errors"][0]["filename"] == "/dags/broken.py"
    events = [e["event"] for e in a["event_logs"]["event_logs"]]
    assert {"trigger_dag_run", "post_pool", "patch_dag", "delete_pool"} <= set(events)
    assert {e["owner"] for e in a["event_logs"]["event_logs"]
            if e["event"] == "trigger_dag_run"} == {"ops"}
    asset = a["assets"]["assets"][0]
    assert (asset["name"], asset["uri"]) == ("orders", "s3://bucket/orders")
    assert [(t["dag_id"], t["task_id"]) for t in asset["producing_tasks"]] == [
        ("daily_v2", "publish")]
    event = a["create_asset_event"]
    assert (event["asset_id"], event["name"], event["extra"]) == (asset["id"], "orders",
                                                                  {"rows": 3})
    assert [e["id"] for e in a["asset_events"]["asset_events"]] == [event["id"]]
    made = a["create_backfill"]
    assert (made["max_active_runs"], made["reprocess_behavior"], made["is_paused"]) == (
        2, "failed", False)
    assert made["from_date"].startswith("2026-02-01")
    assert (a["pause_backfill"]["is_paused"], a["unpause_backfill"]["is_paused"]) == (True, False)
    assert a["cancel_backfill"]["completed_at"] is not None
    assert a["backfills"]["total_entries"] == 2
    listed = {b["id"]: b for b in a["backfills"]["backfills"]}
    assert made["id"] in listed and all(b["dag_id"] == "daily_v2" for b in listed.values())
    first = a["backfills"]["backfills"][0]
    assert (a["backfill"]["id"], a["backfill"]["from_date"]) == (first["id"], first["from_date"])
