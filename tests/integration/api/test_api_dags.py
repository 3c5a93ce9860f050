"""The REST API's DAG resources: list, detail, pause, import errors, health, OpenAPI, metrics."""

from __future__ import annotations

from datetime import timedelta

from api_helpers import add_runs, chain_dag, failing_dag, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine, insert, select
from tests.noop import NoopOperator

from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import import_errors
from statewright.db.tables import dag, job


def test_list_dags_is_paginated_and_filtered(client: TestClient, engine: Engine) -> None:
    for i in range(5):
        store_dag(engine, chain_dag(f"dag_{i}", 2, tags=["even" if i % 2 == 0 else "odd"]),
                  paused=i == 4)
    body = client.get("/api/v1/dags", params={"limit": 2, "offset": 2}).json()
    assert body["total_entries"] == 5
    assert [d["dag_id"] for d in body["dags"]] == ["dag_2", "dag_3"]

    paused = client.get("/api/v1/dags", params={"paused": "true"}).json()
    assert [d["dag_id"] for d in paused["dags"]] == ["dag_4"] and paused["total_entries"] == 1
    odd = client.get("/api/v1/dags", params={"tags": "odd"}).json()
    assert [d["dag_id"] for d in odd["dags"]] == ["dag_1", "dag_3"]
    pattern = client.get("/api/v1/dags", params={"dag_id_pattern": "g_3"}).json()
    assert [d["dag_id"] for d in pattern["dags"]] == ["dag_3"]


def test_list_dags_shows_schedule_tags_and_the_last_runs(client: TestClient,
                                                         engine: Engine) -> None:
    serialized = store_dag(engine, chain_dag("nightly", 2, tags=["etl"]))
    add_runs(engine, serialized, ["r1", "r2", "r3"])
    (d,) = client.get("/api/v1/dags").json()["dags"]
    assert d["tags"] == ["etl"] and d["is_paused"] is False and "schedule" in d
    assert d["last_run_state"] == "queued"
    assert d["last_run"]["dag_run_id"] == "r3"
    assert [r["dag_run_id"] for r in d["recent_runs"]] == ["r3", "r2", "r1"]


def test_get_dag_has_tasks_and_dependencies(client: TestClient, engine: Engine) -> None:
    store_dag(engine, failing_dag())
    body = client.get("/api/v1/dags/etl").json()
    assert body["tasks"][0]["task_id"] == "extract"
    extract = next(t for t in body["tasks"] if t["task_id"] == "extract")
    assert extract["retries"] == 1 and extract["operator"] == "PythonOperator"
    assert sorted(extract["downstream"]) == ["cleanup", "load"]
    assert {(x["source"], x["target"]) for x in body["dependencies"]} == {
        ("extract", "load"), ("extract", "cleanup")}
    assert body["description"] == "a failing pipeline"


def test_get_dag_marks_setup_and_teardown_tasks(client: TestClient, engine: Engine) -> None:
    from statewright.sdk import DAG

    with DAG("infra") as d:
        create = NoopOperator(task_id="create").as_setup()
        work = NoopOperator(task_id="work")
        delete = NoopOperator(task_id="delete").as_teardown(setups=create,
                                                              on_failure_fail_dagrun=True)
        create >> work >> delete
    store_dag(engine, d)
    tasks = {t["task_id"]: t for t in client.get("/api/v1/dags/infra").json()["tasks"]}
    assert (tasks["create"]["is_setup"], tasks["create"]["is_teardown"]) == (True, False)
    assert (tasks["work"]["is_setup"], tasks["work"]["is_teardown"]) == (False, False)
    assert tasks["delete"]["is_teardown"] and tasks["delete"]["on_failure_fail_dagrun"]
    assert tasks["delete"]["trigger_rule"] == "all_done_setup_success"


def test_unknown_dag_is_404_with_a_clear_detail(client: TestClient) -> None:
    res = client.get("/api/v1/dags/nope")
    assert res.status_code == 404
    assert "No DAG with id 'nope'" in res.json()["detail"]


def test_patch_pauses_and_unpauses(client: TestClient, engine: Engine) -> None:
    store_dag(engine, chain_dag("p", 1))
    res = client.patch("/api/v1/dags/p", json={"is_paused": True})
    assert res.status_code == 200 and res.json()["is_paused"] is True
    with engine.connect() as conn:
        assert conn.execute(select(dag.c.is_paused).where(dag.c.dag_id == "p")).scalar_one()
    assert client.patch("/api/v1/dags/p", json={"is_paused": False}).json()["is_paused"] is False


def test_patch_with_a_bad_body_changes_nothing(client: TestClient, engine: Engine) -> None:
    store_dag(engine, chain_dag("p", 1))
    for body in ({"is_paused": "yes"}, {}, {"is_paused": True, "owner": "me"}, [True]):
        res = client.patch("/api/v1/dags/p", json=body)
        assert res.status_code == 422, body
        assert res.json()["detail"].startswith("Invalid request:")
    assert client.get("/api/v1/dags/p").json()["is_paused"] is False
    assert client.patch("/api/v1/dags/nope", json={"is_paused": True}).status_code == 404


def test_import_errors(client: TestClient, engine: Engine) -> None:
    with transaction(engine) as conn:
        import_errors.record(conn, "/dags/broken.py", "Traceback…\nSyntaxError: bad", utcnow())
    body = client.get("/api/v1/importErrors").json()
    assert body["total_entries"] == 1
    (e,) = body["import_errors"]
    assert e["filename"] == "/dags/broken.py" and "SyntaxError" in e["stack_trace"]


def test_health_reports_the_database_and_job_heartbeats(client: TestClient,
                                                        engine: Engine) -> None:
    body = client.get("/api/v1/health").json()
    assert body["status"] == "healthy" and body["metadatabase"]["status"] == "healthy"
    assert body["triggerer"] is None and body["jobs"] == {}

    now = utcnow()
    with transaction(engine) as conn:
        conn.execute(insert(job), [
            {"job_type": "triggerer", "hostname": "h", "pid": 1, "status": "running",
             "start_date": now, "latest_heartbeat": now},
            {"job_type": "scheduler", "hostname": "h", "pid": 2, "status": "running",
             "start_date": now, "latest_heartbeat": now - timedelta(hours=1)},
        ])
    body = client.get("/api/v1/health").json()
    assert body["triggerer"]["status"] == "healthy"
    assert body["triggerer"]["latest_heartbeat"] is not None
    assert body["scheduler"]["status"] == "unhealthy"
    assert body["status"] == "unhealthy"


def test_openapi_docs_and_metrics(client: TestClient) -> None:
    spec = client.get("/api/v1/openapi.json").json()
    for path in ("/api/v1/dags", "/api/v1/dags/{dag_id}/dagRuns", "/api/v1/dags/{dag_id}/grid",
                 "/api/v1/health", "/api/v1/importErrors"):
        assert path in spec["paths"]
    assert client.get("/api/docs").status_code == 200
    client.get("/api/v1/health")
    metrics = client.get("/metrics")
    assert metrics.status_code == 200
    assert 'statewright_api_requests_total{method="GET",route="/api/v1/health"' in metrics.text


def test_unknown_path_answers_json(client: TestClient) -> None:
    res = client.get("/api/v1/nothing/here")
    assert res.status_code == 404 and "/api/docs" in res.json()["detail"]
