"""The REST API's run controls: clear, mark, cancel, pause and resume, all with the actor api."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from api_helpers import chain_dag, run_url, store_dag
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.api.errors import install_handlers
from statewright.core.errors import InvalidTransition


def _actors(client: TestClient, url: str) -> list[tuple[str | None, str, str]]:
    return [(h["from_state"], h["to_state"], h["actor"])
            for h in client.get(url + "/history").json()["transitions"]]


def test_clear_dry_run_changes_nothing(client: TestClient, failed_run: tuple[str, str],
                                       snapshot: Callable[[], tuple[int, int, int]]) -> None:
    dag_id, run_id = failed_run
    before = snapshot()
    res = client.post(run_url(dag_id, run_id) + "/clear",
                      json={"dry_run": True, "only_failed": True})
    assert res.status_code == 200
    plan = res.json()
    assert plan["dry_run"] is True and plan["applied"] is False
    assert {c["task_id"] for c in plan["changes"]} == {"extract", "load"}
    assert plan["run_change"] == {"from_state": "failed", "to_state": "queued",
                                  "message": "tasks cleared by a user: the run starts again"}
    assert snapshot() == before
    assert client.get(run_url(dag_id, run_id)).json()["state"] == "failed"


def test_clear_a_run_puts_it_back_to_queued(client: TestClient,
                                            failed_run: tuple[str, str]) -> None:
    dag_id, run_id = failed_run
    plan = client.post(run_url(dag_id, run_id) + "/clear", json={"only_failed": True}).json()
    assert plan["applied"] is True
    run = client.get(run_url(dag_id, run_id)).json()
    assert run["state"] == "queued" and run["clear_number"] == 1
    tis = {t["task_id"]: t["state"] for t in
           client.get(run_url(dag_id, run_id) + "/taskInstances").json()["task_instances"]}
    assert tis == {"extract": "none", "load": "none", "cleanup": "success"}
    steps = _actors(client, run_url(dag_id, run_id) + "/taskInstances/extract")
    assert steps[-2:] == [("failed", "restarting", "user:admin"),
                          ("restarting", "none", "user:admin")]


def test_clear_one_task_instance(client: TestClient, failed_run: tuple[str, str]) -> None:
    dag_id, run_id = failed_run
    url = run_url(dag_id, run_id) + "/taskInstances/cleanup"
    plan = client.post(url + "/clear", json={}).json()
    assert [c["task_id"] for c in plan["changes"]] == ["cleanup"]
    assert client.get(url).json()["state"] == "none"
    down = client.post(run_url(dag_id, run_id) + "/taskInstances/extract/clear",
                       json={"include_downstream": True, "dry_run": True}).json()
    assert {c["task_id"] for c in down["changes"]} == {"extract", "load"}
    assert down["unchanged"] == [{"task_id": "cleanup",
                                  "reason": "waits for its dependencies already"}]


def test_mark_a_task_instance(client: TestClient, failed_run: tuple[str, str]) -> None:
    dag_id, run_id = failed_run
    url = run_url(dag_id, run_id) + "/taskInstances/extract"
    res = client.patch(url, json={"new_state": "success"})
    assert res.status_code == 200
    ti = res.json()
    assert ti["state"] == "success" and ti["state_message"] == "marked success by a user"
    assert _actors(client, url)[-1] == ("failed", "success", "user:admin")
    bad = client.patch(url, json={"new_state": "running"})
    assert bad.status_code == 422 and "new_state" in bad.json()["detail"]
    assert client.patch(run_url(dag_id, run_id) + "/taskInstances/nope",
                        json={"new_state": "failed"}).status_code == 404


@pytest.fixture
def queued_run(client: TestClient, engine: Engine) -> tuple[str, str]:
    store_dag(engine, chain_dag("ctl", 2))
    assert client.post("/api/v1/dags/ctl/dagRuns", json={"dag_run_id": "r"}).status_code == 200
    return "ctl", "r"


def test_pause_resume_and_cancel_a_run(client: TestClient, queued_run: tuple[str, str]) -> None:
    url = run_url(*queued_run)
    paused = client.patch(url, json={"state": "paused"}).json()
    assert paused["state"] == "paused"
    resumed = client.patch(url, json={"state": "running"}).json()
    assert resumed["state"] == "queued"  # it had not started: back to queued
    cancelled = client.patch(url, json={"state": "cancelled"}).json()
    assert cancelled["state"] == "cancelled" and cancelled["state_name"] == "Cancelled"
    tis = client.get(url + "/taskInstances").json()["task_instances"]
    assert {(t["state"], t["state_name"]) for t in tis} == {("skipped", "Cancelled")}
    run_steps = [h for h in client.get(url + "/history").json()["transitions"]
                 if h["task_id"] is None]
    assert [(h["to_state"], h["actor"]) for h in run_steps] == [
        ("queued", "user:admin"), ("paused", "user:admin"), ("queued", "user:admin"),
        ("cancelled", "user:admin")]


def test_mark_a_run_and_its_refusals(client: TestClient, queued_run: tuple[str, str],
                                     snapshot: Callable[[], tuple[int, int, int]]) -> None:
    url = run_url(*queued_run)
    assert client.patch(url, json={"state": "success"}).json()["state"] == "success"
    before = snapshot()
    res = client.patch(url, json={"state": "cancelled"})
    assert res.status_code == 409 and "has finished (success)" in res.json()["detail"]
    res = client.patch(url, json={"state": "running"})
    assert res.status_code == 409 and "only a paused run can be resumed" in res.json()["detail"]
    res = client.patch(url, json={"state": "upstream_failed"})
    assert res.status_code == 422 and "state" in res.json()["detail"]
    assert snapshot() == before
    assert client.patch(run_url("ctl", "nope"), json={"state": "failed"}).status_code == 404


def test_clear_unknown_tasks_is_404_and_changes_nothing(
        client: TestClient, failed_run: tuple[str, str],
        snapshot: Callable[[], tuple[int, int, int]]) -> None:
    dag_id, run_id = failed_run
    before = snapshot()
    res = client.post(run_url(dag_id, run_id) + "/clear", json={"task_ids": ["extract", "zz"]})
    assert res.status_code == 404 and "has no task 'zz'" in res.json()["detail"]
    assert client.post(run_url(dag_id, run_id) + "/taskInstances/zz/clear",
                       json={}).status_code == 404
    assert client.post(run_url(dag_id, "nope") + "/clear", json={}).status_code == 404
    assert client.post(run_url(dag_id, run_id) + "/clear",
                       json={"dry_run": "maybe"}).status_code == 422
    assert snapshot() == before


def test_an_invalid_transition_is_409_naming_the_edge() -> None:
    app = FastAPI()
    install_handlers(app)

    @app.get("/boom")
    def boom() -> None:
        raise InvalidTransition("task_instance", "success", "running", "api")

    res = TestClient(app).get("/boom")
    assert res.status_code == 409
    body = res.json()
    assert "the edge success -> running is not allowed" in body["detail"]
    assert body["edge"] == {"entity": "task_instance", "from": "success", "to": "running",
                            "actor": "api"}
