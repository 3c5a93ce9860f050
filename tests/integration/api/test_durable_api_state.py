"""Task state and asset state in the REST API and the UI pages (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import datetime

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.sdk import DAG, NEVER_EXPIRE, Asset, task

MARKUP = "<b>not markup</b>"


def _run(engine: Engine) -> str:
    orders = Asset(name="api/orders", uri="s3://w/api-orders")
    with DAG("ts_api", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
        @task(outlets=[orders])
        def keep(task_state_store=None, asset_state_store=None):  # type: ignore[no-untyped-def]
            task_state_store.set("job_id", MARKUP, retention=NEVER_EXPIRE)
            asset_state_store[orders].set("watermark", {"at": MARKUP})
        keep()
    run = dag.test(engine=engine)
    assert run.state.value == "success"
    return run.run_id


def test_the_api_lists_a_tasks_state_and_an_assets_state(client: TestClient,
                                                          engine: Engine) -> None:
    run_id = _run(engine)
    got = client.get(f"/api/v1/dags/ts_api/dagRuns/{run_id}/taskInstances/keep/taskState")
    assert got.status_code == 200, got.text
    (entry,) = got.json()["entries"]
    assert (entry["key"], entry["value"], entry["retention"], entry["try_number"]) == (
        "job_id", MARKUP, "never_expire", 1)
    assets = client.get("/api/v1/assets/state", params={"name": "api/orders"}).json()
    assert assets["entries"][0]["value"] == {"at": MARKUP}
    assert assets["entries"][0]["written_by"] == f"ts_api/{run_id}/keep"
    none = client.get("/api/v1/dags/ts_api/dagRuns/nope/taskInstances/keep/taskState")
    assert none.json() == {"entries": [], "total_entries": 0}


def test_the_pages_show_state_as_text(client: TestClient, engine: Engine) -> None:
    run_id = _run(engine)
    page = client.get(f"/dags/ts_api/runs/{run_id}/tasks/keep").text
    assert "job_id" in page and "&lt;b&gt;not markup&lt;/b&gt;" in page
    assert MARKUP not in page
    page = client.get("/assets").text
    assert "watermark" in page and "api/orders" in page and MARKUP not in page


def test_state_routes_need_a_signed_in_user(anonymous: TestClient) -> None:
    assert anonymous.get("/api/v1/assets/state", params={"name": "x"}).status_code == 401


def test_display_names_reach_the_api_and_the_pages(client: TestClient, engine: Engine) -> None:
    with DAG("dn_api", schedule=None, start_date=datetime(2024, 1, 1),
             dag_display_name="Shown <Name>") as dag:
        @task(task_display_name="Step <one>")
        def one() -> None: ...
        one()
    run_id = dag.test(engine=engine).run_id
    listed = {d["dag_id"]: d for d in client.get("/api/v1/dags").json()["dags"]}
    assert listed["dn_api"]["dag_display_name"] == "Shown <Name>"
    assert "Shown &lt;Name&gt;" in client.get("/dags/dn_api").text
    page = client.get(f"/dags/dn_api/runs/{run_id}/tasks/one").text
    assert "Step &lt;one&gt;" in page and "Step <one>" not in page


def test_clearing_through_the_api_keeps_state_unless_asked(client: TestClient,
                                                           engine: Engine) -> None:
    run_id = _run(engine)
    url = f"/api/v1/dags/ts_api/dagRuns/{run_id}/taskInstances/keep"
    state = f"{url}/taskState"
    assert client.post(f"{url}/clear", json={}).status_code == 200
    assert [e["key"] for e in client.get(state).json()["entries"]] == ["job_id"]
    other = _run(engine)
    url = f"/api/v1/dags/ts_api/dagRuns/{other}/taskInstances/keep"
    done = client.post(f"{url}/clear", json={"clear_state": True})
    assert done.status_code == 200, done.text
    assert client.get(f"{url}/taskState").json()["entries"] == []
    bad = client.post(f"{url}/clear", json={"clear_state": "yes"})
    assert bad.status_code in (400, 422)
