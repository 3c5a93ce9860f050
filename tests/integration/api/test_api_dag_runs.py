"""The REST API's DAG runs: trigger (with its errors), list, read, history."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from api_helpers import add_runs, chain_dag, run_url, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine


@pytest.fixture
def dag_id(engine: Engine) -> str:
    store_dag(engine, chain_dag("pipeline", 3))
    return "pipeline"


def test_trigger_creates_a_queued_run_by_the_api(client: TestClient, dag_id: str) -> None:
    res = client.post(f"/api/v1/dags/{dag_id}/dagRuns",
                      json={"dag_run_id": "r1", "conf": {"date": "2026-01-01", "n": [1, 2]},
                            "logical_date": "2026-01-01T00:00:00+02:00"})
    assert res.status_code == 200, res.text
    run = res.json()
    assert run["dag_run_id"] == "r1" and run["state"] == "queued"
    assert run["state_name"] == "Queued" and run["run_type"] == "manual"
    assert run["conf"] == {"date": "2026-01-01", "n": [1, 2]}
    assert run["logical_date"] == "2025-12-31T22:00:00Z"
    assert run["triggered_by"] == "user:admin"
    tis = client.get(run_url(dag_id, "r1") + "/taskInstances").json()
    assert [t["state"] for t in tis["task_instances"]] == ["none", "none", "none"]
    history = client.get(run_url(dag_id, "r1") + "/history").json()["transitions"]
    assert {h["actor"] for h in history} == {"user:admin"}
    assert history[0]["task_id"] is None and history[0]["to_state"] == "queued"


def test_trigger_without_a_body_field_gets_a_manual_run_id(client: TestClient,
                                                           dag_id: str) -> None:
    run = client.post(f"/api/v1/dags/{dag_id}/dagRuns", json={}).json()
    assert run["dag_run_id"].startswith("manual__") and run["conf"] == {}


def test_duplicate_run_id_is_409_and_changes_nothing(
        client: TestClient, dag_id: str, snapshot: Callable[[], tuple[int, int, int]]) -> None:
    assert client.post(f"/api/v1/dags/{dag_id}/dagRuns",
                       json={"dag_run_id": "same"}).status_code == 200
    before = snapshot()
    res = client.post(f"/api/v1/dags/{dag_id}/dagRuns",
                      json={"dag_run_id": "same", "conf": {"x": 1}})
    assert res.status_code == 409
    assert "already has a run 'same'" in res.json()["detail"]
    assert snapshot() == before
    assert client.get(run_url(dag_id, "same")).json()["conf"] == {}


def test_a_second_run_at_the_same_logical_date_is_409_and_changes_nothing(
        client: TestClient, dag_id: str, snapshot: Callable[[], tuple[int, int, int]]) -> None:
    at = "2026-01-01T00:00:00+00:00"
    assert client.post(f"/api/v1/dags/{dag_id}/dagRuns",
                       json={"dag_run_id": "first", "logical_date": at}).status_code == 200
    before = snapshot()
    res = client.post(f"/api/v1/dags/{dag_id}/dagRuns",
                      json={"dag_run_id": "second", "logical_date": "2026-01-01T01:00:00+01:00"})
    assert res.status_code == 409
    detail = res.json()["detail"]
    assert "already has a run at logical date 2026-01-01T00:00:00+00:00 ('first')" in detail
    assert "Nothing was created" in detail
    assert snapshot() == before
    assert client.get(run_url(dag_id, "second")).status_code == 404
    # Another logical date, and runs without one given (each at its own time), are fine.
    assert client.post(f"/api/v1/dags/{dag_id}/dagRuns",
                       json={"logical_date": "2026-01-02T00:00:00Z"}).status_code == 200
    assert client.post(f"/api/v1/dags/{dag_id}/dagRuns", json={}).status_code == 200


def test_trigger_of_an_unknown_dag_is_404(
        client: TestClient, snapshot: Callable[[], tuple[int, int, int]]) -> None:
    before = snapshot()
    res = client.post("/api/v1/dags/nope/dagRuns", json={"conf": {}})
    assert res.status_code == 404 and "No DAG with id 'nope'" in res.json()["detail"]
    assert snapshot() == before


@pytest.mark.parametrize(("body", "says"), [
    ({"conf": [1, 2]}, "conf"),
    ({"conf": "x=1"}, "conf"),
    ({"dag_run_id": ""}, "dag_run_id"),
    ({"dag_run_id": "a/b"}, "dag_run_id"),
    ({"dag_run_id": 12}, "dag_run_id"),
    ({"logical_date": "2026-01-01T00:00:00"}, "needs a timezone"),
    ({"logical_date": "yesterday"}, "logical_date"),
    ({"run_id": "r"}, "'run_id' is not a known field"),
    ([1], "must be a JSON object"),
    ("{not json", "not valid JSON"),
    (None, "body is required"),
])
def test_malformed_trigger_bodies_are_422_with_a_clear_message(
        client: TestClient, dag_id: str, snapshot: Callable[[], tuple[int, int, int]],
        body: object, says: str) -> None:
    before = snapshot()
    if isinstance(body, str):
        res = client.post(f"/api/v1/dags/{dag_id}/dagRuns", content=body,
                          headers={"Content-Type": "application/json"})
    elif body is None:
        res = client.post(f"/api/v1/dags/{dag_id}/dagRuns")
    else:
        res = client.post(f"/api/v1/dags/{dag_id}/dagRuns", json=body)
    assert res.status_code == 422, res.text
    detail = res.json()["detail"]
    assert detail.startswith("Invalid request:") and says in detail
    assert detail.endswith("Nothing was changed.")
    assert snapshot() == before


def test_runs_are_listed_newest_first_and_paginated(client: TestClient, engine: Engine,
                                                    dag_id: str) -> None:
    serialized = client.get(f"/api/v1/dags/{dag_id}").json()
    assert serialized["dag_id"] == dag_id
    from statewright.db.repositories import dags as dag_repo

    with engine.connect() as conn:
        ser = dag_repo.get_serialized(conn, dag_id)
    assert ser is not None
    add_runs(engine, ser, [f"r{i}" for i in range(7)])
    page = client.get(f"/api/v1/dags/{dag_id}/dagRuns", params={"limit": 3}).json()
    assert page["total_entries"] == 7
    assert [r["dag_run_id"] for r in page["dag_runs"]] == ["r6", "r5", "r4"]
    page = client.get(f"/api/v1/dags/{dag_id}/dagRuns",
                      params={"limit": 3, "offset": 6}).json()
    assert [r["dag_run_id"] for r in page["dag_runs"]] == ["r0"]
    oldest = client.get(f"/api/v1/dags/{dag_id}/dagRuns",
                        params={"order_by": "run_after", "limit": 1}).json()
    assert oldest["dag_runs"][0]["dag_run_id"] == "r0"


def test_runs_can_be_filtered_by_state(client: TestClient, engine: Engine, dag_id: str,
                                       failed_run: tuple[str, str]) -> None:
    client.post(f"/api/v1/dags/{dag_id}/dagRuns", json={"dag_run_id": "q1"})
    etl, run_id = failed_run
    failed = client.get(f"/api/v1/dags/{etl}/dagRuns", params={"state": "failed"}).json()
    assert [r["dag_run_id"] for r in failed["dag_runs"]] == [run_id]
    assert client.get(f"/api/v1/dags/{etl}/dagRuns",
                      params={"state": ["queued", "running"]}).json()["total_entries"] == 0
    queued = client.get(f"/api/v1/dags/{dag_id}/dagRuns", params={"state": "queued"}).json()
    assert [r["dag_run_id"] for r in queued["dag_runs"]] == ["q1"]


@pytest.mark.parametrize("params", [{"state": "done"}, {"order_by": "name"}, {"limit": 0},
                                    {"limit": 5000}, {"offset": -1}])
def test_bad_list_parameters_are_422(client: TestClient, dag_id: str,
                                     params: dict[str, object]) -> None:
    res = client.get(f"/api/v1/dags/{dag_id}/dagRuns", params=params)
    assert res.status_code == 422 and res.json()["detail"].startswith("Invalid request:")


def test_get_run_counts_its_task_instances(client: TestClient,
                                           failed_run: tuple[str, str]) -> None:
    dag_id, run_id = failed_run
    run = client.get(run_url(dag_id, run_id)).json()
    assert run["state"] == "failed" and run["end_date"] is not None
    assert run["duration"] is not None and run["duration"] >= 0
    assert run["task_instance_states"] == {"failed": 1, "upstream_failed": 1, "success": 1}


def test_unknown_dag_or_run_is_404(client: TestClient, dag_id: str) -> None:
    for url in (run_url(dag_id, "missing"), run_url("nope", "missing"),
                "/api/v1/dags/nope/dagRuns", run_url(dag_id, "missing") + "/history"):
        res = client.get(url)
        assert res.status_code == 404, url
        assert res.json()["detail"]
    assert "has no run 'missing'" in client.get(run_url(dag_id, "missing")).json()["detail"]
    assert "No DAG" in client.get(run_url("nope", "missing")).json()["detail"]
