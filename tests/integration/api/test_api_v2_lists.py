"""/api/v2's lists across DAGs and runs (``~``) and their filters: runs, task instances, XCom
entries, the batch forms, statewright's exact state beside Airflow's nearest, and filters that
are wrong or not served answered 4xx (never ignored)."""

from __future__ import annotations

from typing import Any

import pytest
from api_helpers import add_runs, chain_dag, failing_dag, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.config import Settings
from statewright.sdk import DAG, task

RUNS = "/api/v2/dags/~/dagRuns"
TIS = "/api/v2/dags/~/dagRuns/~/taskInstances"


def _producer() -> DAG:
    with DAG("producer") as dag:
        @task
        def make(x: int) -> int:
            return x * 10

        @task
        def one() -> str:
            return "one"

        make.expand(x=[1, 2])
        one()
    return dag


@pytest.fixture
def seeded(engine: Engine, settings: Settings) -> dict[str, str]:
    """``etl``: one failed run; ``producer``: one successful run with XComs; ``chain``: two
    queued runs (task instances not yet scheduled)."""
    failed = failing_dag().test(engine=engine, logs_folder=settings.logs_folder)
    produced = _producer().test(engine=engine, logs_folder=settings.logs_folder)
    add_runs(engine, store_dag(engine, chain_dag("chain", 2)), ["c1", "c2"])
    return {"etl": failed.run_id, "producer": produced.run_id}


def _get(client: TestClient, url: str, **params: Any) -> Any:
    answer = client.get(url, params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_runs_of_every_dag_with_filters(client: TestClient, seeded: dict[str, str]) -> None:
    everything = _get(client, RUNS)
    assert everything["total_entries"] == 4
    assert sorted(r["dag_id"] for r in everything["dag_runs"]) == [
        "chain", "chain", "etl", "producer"]
    failed = _get(client, RUNS, state="failed")["dag_runs"]
    assert [(r["dag_id"], r["state"], r["statewright_state"], r["state_name"])
            for r in failed] == [("etl", "failed", "failed", "Failed")]
    page = _get(client, RUNS, dag_id_pattern="CHA", order_by="-run_id", limit=1, offset=0)
    assert (page["total_entries"], [r["dag_run_id"] for r in page["dag_runs"]]) == (2, ["c2"])
    assert _get(client, RUNS, run_id_prefix_pattern="c", run_type="manual")["total_entries"] == 0
    after = everything["dag_runs"][0]["run_after"]
    assert _get(client, RUNS, run_after_lt=after)["total_entries"] == 0
    assert _get(client, "/api/v2/dags/chain/dagRuns", state=["queued", "running"]
                )["total_entries"] == 2


def test_a_flows_run_is_manual_to_airflow_and_flow_in_statewrights_field(
        client: TestClient, engine: Engine) -> None:
    from statewright.core.clock import utcnow
    from statewright.core.transitions import Actor
    from statewright.db.engine import transaction
    from statewright.services.dag_runs import create_run
    from statewright.services.dag_view import DagView

    with DAG("my_flow") as dag:
        @task
        def step() -> None:
            return None

        step()
    serialized = store_dag(engine, dag)
    with transaction(engine) as conn:
        create_run(conn, DagView(serialized, "h"), now=utcnow(), actor=Actor.USER,
                   run_id="f1", run_type="flow")
    add_runs(engine, serialized, ["s1"])
    runs = {r["dag_run_id"]: (r["run_type"], r["statewright_run_type"])
            for r in _get(client, RUNS)["dag_runs"]}
    assert runs == {"f1": ("manual", "flow"), "s1": ("scheduled", "scheduled")}
    only = _get(client, RUNS, run_type="flow")["dag_runs"]
    assert [r["dag_run_id"] for r in only] == ["f1"]


def test_run_lists_refuse_what_they_cannot_serve(client: TestClient,
                                                 seeded: dict[str, str]) -> None:
    assert client.get("/api/v2/dags/nope/dagRuns").status_code == 404
    wrong_order = client.get(RUNS, params={"order_by": "colour"})
    assert wrong_order.status_code == 400 and "colour" in wrong_order.json()["detail"]
    assert client.get(RUNS, params={"state": "sleepy"}).status_code == 400
    unserved = client.get(RUNS, params={"conf_contains": "x"})
    assert unserved.status_code == 400 and "conf_contains" in unserved.json()["detail"]
    assert client.post("/api/v2/dags/etl/dagRuns/list", json={}).status_code == 422
    refused = client.post(RUNS + "/list", json={"duration_gt": 1})
    assert refused.status_code == 400 and "duration_gt" in refused.json()["detail"]


def test_runs_batch(client: TestClient, seeded: dict[str, str]) -> None:
    answer = client.post(RUNS + "/list", json={"dag_ids": ["etl", "producer"],
                                              "order_by": "-dag_id", "page_limit": 5})
    assert answer.status_code == 200, answer.text
    assert [r["dag_id"] for r in answer.json()["dag_runs"]] == ["producer", "etl"]
    only = client.post(RUNS + "/list", json={"states": ["success", None]}).json()
    assert [r["dag_id"] for r in only["dag_runs"]] == ["producer"]


def test_task_instances_of_every_run(client: TestClient, seeded: dict[str, str]) -> None:
    every = _get(client, TIS, limit=100)
    assert every["total_entries"] == 3 + 3 + 4  # etl, producer (2 mapped), chain's two runs
    failed = _get(client, TIS, state="failed")["task_instances"]
    assert [(t["dag_id"], t["task_id"], t["statewright_state"]) for t in failed] == [
        ("etl", "extract", "failed")]
    waiting = _get(client, TIS, state="no_status", dag_id_pattern="chain", order_by="-run_id")
    assert [(t["dag_run_id"], t["state"], t["statewright_state"]) for t in
            waiting["task_instances"]] == [("c2", None, "none")] * 2 + [("c1", None, "none")] * 2
    of_dag = _get(client, "/api/v2/dags/producer/dagRuns/~/taskInstances", task_id="make")
    assert sorted(t["map_index"] for t in of_dag["task_instances"]) == [0, 1]
    run = _get(client, f"/api/v2/dags/~/dagRuns/{seeded['etl']}/taskInstances",
               order_by="-try_number")
    assert run["task_instances"][0]["task_id"] == "extract"
    assert run["task_instances"][0]["try_number"] == 2
    assert _get(client, TIS, duration_gte=3600)["total_entries"] == 0
    assert client.get("/api/v2/dags/etl/dagRuns/nope/taskInstances").status_code == 404
    assert client.get(TIS, params={"task_group_id": "g"}).status_code == 400


def test_task_instances_batch(client: TestClient, seeded: dict[str, str]) -> None:
    answer = client.post(TIS + "/list", json={"dag_ids": ["etl", "chain"],
                                             "task_ids": ["load", "t00"], "page_limit": 10})
    assert answer.status_code == 200, answer.text
    assert sorted((t["dag_id"], t["task_id"]) for t in answer.json()["task_instances"]) == [
        ("chain", "t00"), ("chain", "t00"), ("etl", "load")]
    assert client.post("/api/v2/dags/~/dagRuns/x/taskInstances/list", json={}
                       ).status_code == 422


def test_xcom_entries_of_every_task(client: TestClient, seeded: dict[str, str]) -> None:
    url = "/api/v2/dags/~/dagRuns/~/taskInstances/~/xcomEntries"
    every = _get(client, url)
    assert [(x["dag_id"], x["task_id"], x["map_index"], x["key"])
            for x in every["xcom_entries"]] == [
        ("producer", "make", 0, "return_value"), ("producer", "make", 1, "return_value"),
        ("producer", "one", -1, "return_value")]
    assert _get(client, url, map_index=1)["total_entries"] == 1
    assert _get(client, url, map_index=1, map_index_filter=1)["total_entries"] == 1
    assert _get(client, url, map_index=1, map_index_filter=0)["total_entries"] == 0
    assert _get(client, url, task_id_pattern="ON")["xcom_entries"][0]["task_id"] == "one"
    run = seeded["producer"]
    one = _get(client, f"/api/v2/dags/producer/dagRuns/{run}/taskInstances/one/xcomEntries")
    assert [x["key"] for x in one["xcom_entries"]] == ["return_value"]
    missing = client.get(f"/api/v2/dags/producer/dagRuns/{run}/taskInstances/nope/xcomEntries")
    assert missing.status_code == 404
