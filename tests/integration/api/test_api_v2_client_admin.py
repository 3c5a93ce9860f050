"""The admin side of a team's script through the official ``apache-airflow-client`` against a
real statewright server, on SQLite and PostgreSQL: bulk connections, variables and pools,
filtered lists, DAG versions and sources, answering a HITL request, config, jobs, plugins,
providers, DAG stats, tags and warnings, one import error and event log, assets, aliases and
queued asset events."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from airflow_client_harness import client_python, serving
from api_helpers import store_dag
from sqlalchemy import Engine
from test_api_dag_versions import sync
from tests.hitl_helpers import drive

from statewright.config import Settings
from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import import_errors
from statewright.db.repositories import jobs as job_repo
from statewright.sdk import DAG, Asset, AssetAlias, EmptyOperator, HITLOperator
from statewright.services.auth.accounts import create_user
from statewright.services.dag_processor.asset_refs import sync_dag_assets

CALLS = Path(__file__).with_name("airflow_client_admin_calls.py")


@pytest.fixture(scope="session")
def airflow_client() -> Path:
    return client_python()


def _seed(engine: Engine, folder: Path) -> str:
    """A versioned DAG producing an asset, a DAG scheduled on it, an import error, a job and a
    run awaiting a HITL answer (its run id)."""
    orders = Asset(name="orders", uri="s3://bucket/orders")
    with DAG("shipping", tags=["ops"]) as shipping:
        EmptyOperator(task_id="ship", outlets=[orders, AssetAlias("any_order")])
    sync(engine, folder / "shipping.py", "# shipping\n", shipping.serialize(), utcnow())
    with DAG("on_orders", schedule=[orders]) as consumer:
        EmptyOperator(task_id="use")
    stored = [store_dag(engine, consumer), shipping.serialize()]
    with transaction(engine) as conn:
        sync_dag_assets(conn, stored, utcnow())
        import_errors.record(conn, "/dags/broken.py", "SyntaxError: invalid syntax", utcnow())
        job_repo.register(conn, job_type="scheduler", hostname="sched-1", pid=7, capacity=None,
                          now=utcnow())
    with DAG("release") as release:
        HITLOperator(task_id="approve", subject="Ship release 7?", options=["yes", "no"])
    driven = drive(engine, release, folder / "hitl")
    driven.settle()
    return driven.run_id


@pytest.fixture
def answers(engine: Engine, settings: Settings, airflow_client: Path, tmp_path: Path
            ) -> Iterator[dict[str, Any]]:
    hitl_run = _seed(engine, tmp_path)
    create_user(engine, "ops", "password-ops", "admin", utcnow())
    exposed = settings.with_overrides(expose_config="non-sensitive-only")
    with serving(engine, exposed) as url:
        done = subprocess.run([str(airflow_client), str(CALLS), url, "ops", "password-ops",
                               "shipping", "release", hitl_run],
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-4000:]
        yield json.loads(done.stdout)


def _names(items: list[dict[str, Any]], key: str) -> list[Any]:
    return [i[key] for i in items]


@pytest.mark.slow  # a real server and the client in its own interpreter
def test_the_admin_side_of_a_teams_script(answers: dict[str, Any],
                                          auth_headers: Callable[..., Any]) -> None:
    a = answers
    assert a["bulk_connections"]["create"]["success"] == ["bulk_a", "bulk_b"]
    assert a["bulk_connections"]["update"]["success"] == ["bulk_a"]
    assert a["bulk_connections"]["delete"]["success"] == ["bulk_b"]
    conns = a["connections_filtered"]["connections"]
    assert [(c["connection_id"], c["host"]) for c in conns] == [("bulk_a", "a2.internal")]
    created, again = a["bulk_variables"]["create"]["success"], a["bulk_variables"]["create"]
    assert created == ["v_one", "v_two"] and again["errors"][0]["status_code"] == 409
    assert _names(a["variables_filtered"]["variables"], "key") == ["v_two", "v_one"]
    assert a["bulk_pools"]["update"]["success"] == ["bulk_pool"]
    assert [(p["name"], p["slots"]) for p in a["pools_filtered"]["pools"]] == [("bulk_pool", 6)]

    [version] = a["dag_versions"]["dag_versions"]
    assert (version["version_number"], version["dag_id"]) == (1, "shipping")
    assert a["dag_version"]["id"] == version["id"]
    assert a["dag_source"]["content"] == "# shipping\n"

    [detail] = a["hitl_details"]["hitl_details"]
    assert (detail["subject"], detail["task_instance"]["state"]) == (
        "Ship release 7?", "awaiting_input")
    assert a["hitl_detail"]["options"] == ["yes", "no"]
    assert (a["hitl_answer"]["chosen_options"], a["hitl_answer"]["responded_by"]["name"]) == (
        ["yes"], "ops")
    assert a["hitl_answer_again"]["error"] == 409

    [core] = a["config"]["sections"]
    options = {o["key"]: o["value"] for o in core["options"]}
    assert core["name"] == "core" and options["fernet_key"] in ("", "< hidden >")
    assert a["config_value"]["sections"][0]["options"] == [{"key": "parallelism",
                                                             "value": "8"}]
    assert [(j["job_type"], j["hostname"]) for j in a["jobs"]["jobs"]] == [
        ("SchedulerJob", "sched-1")]
    assert a["plugins"]["total_entries"] == len(a["plugins"]["plugins"])
    assert "apache-airflow-providers-postgres" in _names(a["providers"]["providers"],
                                                         "package_name")
    [stats] = a["dag_stats"]["dags"]
    assert stats["dag_id"] == "shipping" and len(stats["stats"]) == 4
    assert a["dag_tags"]["tags"] == ["ops"]
    assert a["dag_warnings"] == {"dag_warnings": [], "total_entries": 0}
    assert a["import_error"]["filename"] == "/dags/broken.py"
    assert a["event_logs"]["event_logs"][0]["event"] == "bulk_pools"
    assert a["event_log"]["event_log_id"] == a["event_logs"]["event_logs"][0]["event_log_id"]

    [asset] = a["assets"]["assets"]
    assert (a["asset"]["id"], a["asset"]["uri"]) == (asset["id"], "s3://bucket/orders")
    assert _names(a["aliases"]["asset_aliases"], "name") == ["any_order"]
    assert a["alias"]["name"] == "any_order"
    assert a["events"]["asset_events"][0]["id"] == a["create_event"]["id"]
    assert _names(a["queued"]["queued_events"], "dag_id") == ["on_orders"]
    assert (a["dag_queued"]["dag_id"], a["dag_queued"]["asset_id"]) == ("on_orders",
                                                                        asset["id"])
    assert a["delete_queued"] is None and a["queued_after"]["error"] == 404
