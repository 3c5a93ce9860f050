"""/api/v2's last routes of Airflow 3.3 (issue 35): every DAG's versions (``dags/~``), a HITL
request by try, and the two Airflow routes statewright refuses with a 400 saying why (deleting
one task instance, creating Airflow's default connections); on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import Engine
from test_api_dag_versions import sync
from tests.hitl_helpers import drive

from statewright.core.clock import utcnow
from statewright.sdk import DAG, EmptyOperator, HITLOperator

V2 = "/api/v2"


def _synced(engine: Engine, folder: Path, dag_id: str, task_ids: list[str]) -> None:
    with DAG(dag_id) as dag:
        for task_id in task_ids:
            EmptyOperator(task_id=task_id)
    sync(engine, folder / f"{dag_id}.py", f"# {dag_id} {task_ids}\n", dag.serialize(),
         utcnow())


def test_every_dags_versions(client: TestClient, engine: Engine, tmp_path: Path) -> None:
    _synced(engine, tmp_path, "alpha", ["a"])
    _synced(engine, tmp_path, "alpha", ["a", "b"])  # a new structure: version 2
    _synced(engine, tmp_path, "beta", ["x"])
    every = client.get(f"{V2}/dags/~/dagVersions")
    assert every.status_code == 200, every.text
    body = every.json()
    assert body["total_entries"] == 3
    assert sorted((v["dag_id"], v["version_number"]) for v in body["dag_versions"]) == [
        ("alpha", 1), ("alpha", 2), ("beta", 1)]
    ones = client.get(f"{V2}/dags/~/dagVersions", params={"version_number": 1}).json()
    assert sorted(v["dag_id"] for v in ones["dag_versions"]) == ["alpha", "beta"]
    page = client.get(f"{V2}/dags/~/dagVersions",
                      params={"order_by": "-version_number", "limit": 1}).json()
    assert page["total_entries"] == 3
    assert [(v["dag_id"], v["version_number"]) for v in page["dag_versions"]] == [("alpha", 2)]
    one = client.get(f"{V2}/dags/alpha/dagVersions").json()
    assert {v["id"] for v in one["dag_versions"]} <= {v["id"] for v in body["dag_versions"]}
    assert client.get(f"{V2}/dags/~/dagVersions", params={"limit": -1}).status_code == 422
    assert client.get(f"{V2}/dags/~/dagVersions",
                      params={"order_by": "dag_id"}).status_code == 400


def test_hitl_detail_of_a_try(client: TestClient, engine: Engine, tmp_path: Path) -> None:
    with DAG("hitl_tries") as dag:
        HITLOperator(task_id="approve", subject="Ship it?", options=["yes", "no"])
    d = drive(engine, dag, tmp_path)
    d.settle()
    one = f"{V2}/dags/hitl_tries/dagRuns/{d.run_id}/taskInstances/approve/-1/hitlDetails"
    got = client.get(f"{one}/tries/1")
    assert got.status_code == 200, got.text
    body = got.json()
    assert (body["subject"], body["options"], body["response_received"]) == (
        "Ship it?", ["yes", "no"], False)
    ti = body["task_instance"]
    assert (ti["task_id"], ti["try_number"], ti["map_index"], ti["dag_run_id"]) == (
        "approve", 1, -1, d.run_id)
    assert client.patch(one, json={"chosen_options": ["no"]}).status_code == 200
    answered = client.get(f"{one}/tries/1").json()
    assert (answered["chosen_options"], answered["responded_by_user"]["name"]) == (
        ["no"], "admin")
    other = client.get(f"{one}/tries/2")
    assert other.status_code == 404
    assert "try 1" in other.json()["detail"]
    assert client.get(f"{one}/tries/0").status_code == 422
    assert client.get(f"{one}/tries/x").status_code == 422
    missing = one.replace("/approve/", "/nope/")
    assert client.get(f"{missing}/tries/1").status_code == 404


def test_deleting_one_task_instance_is_refused_saying_why(
        client: TestClient, engine: Engine, tmp_path: Path,
        auth_headers: Callable[..., dict[str, str]]) -> None:
    with DAG("keep_tis") as dag:
        EmptyOperator(task_id="only")
    d = drive(engine, dag, tmp_path)
    d.settle()
    url = f"{V2}/dags/keep_tis/dagRuns/{d.run_id}/taskInstances/only"
    refused = client.delete(url)
    assert refused.status_code == 400
    assert "DELETE /api/v2/dags/keep_tis/dagRuns/" in refused.json()["detail"]
    assert client.get(url).status_code == 200  # still there
    assert client.delete(url, params={"map_index": 3}).status_code == 404
    assert client.delete(url, params={"map_index": -2}).status_code == 422
    assert client.delete(url.replace("/only", "/nope")).status_code == 404
    viewer = client.delete(url, headers=auth_headers(engine, "watcher", "viewer"))
    assert viewer.status_code == 403


def test_default_connections_are_refused_saying_why(
        client: TestClient, engine: Engine,
        auth_headers: Callable[..., dict[str, str]]) -> None:
    refused = client.post(f"{V2}/connections/defaults")
    assert refused.status_code == 400
    assert "no list of default connections" in refused.json()["detail"]
    assert client.get(f"{V2}/connections").json()["total_entries"] == 0
    op = client.post(f"{V2}/connections/defaults",
                     headers=auth_headers(engine, "ops", "operator"))
    assert op.status_code == 403
    # a connection named "defaults" is still a connection like any other
    made = client.post(f"{V2}/connections", json={"connection_id": "defaults",
                                                  "conn_type": "http"})
    assert made.status_code == 201, made.text
    assert client.get(f"{V2}/connections/defaults").json()["conn_type"] == "http"
