"""A run's deadlines over the REST API: due, met or missed, with the callback's outcome."""

from __future__ import annotations

from datetime import timedelta

from api_helpers import store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.sdk import DAG, DeadlineAlert, DeadlineReference, SyncCallback
from statewright.services.dag_runs import trigger_dag
from statewright.services.scheduler.deadlines import check_deadlines


def notify(**_: object) -> None:
    """A deadline callback."""


def test_a_runs_deadlines_show_missed_and_ahead(client: TestClient, engine: Engine) -> None:
    with DAG("sla", deadline=[
        DeadlineAlert(reference=DeadlineReference.DAGRUN_QUEUED_AT,
                      interval=timedelta(minutes=10), callback=SyncCallback(notify)),
        DeadlineAlert(reference=DeadlineReference.DAGRUN_QUEUED_AT,
                      interval=timedelta(hours=10), callback=SyncCallback(notify)),
    ]) as dag:
        NoopOperator(task_id="t")
    store_dag(engine, dag)
    now = utcnow()
    with transaction(engine) as conn:
        trigger_dag(conn, "sla", now=now, actor=Actor.USER, run_id="r1")
    assert check_deadlines(engine, now + timedelta(minutes=11)) == 1
    body = client.get("/api/v1/dags/sla/dagRuns/r1/deadlines").json()
    assert body["total_entries"] == 2
    first, second = body["deadlines"]
    assert (first["status"], first["reference"], first["callback_status"]) == (
        "missed", "DAGRUN_QUEUED_AT", "pending")
    assert first["callback"].endswith(".notify") and first["callback_kind"] == "sync"
    assert "deadline missed" in first["message"]
    assert second["status"] == "pending" and second["callback_status"] is None
    history = client.get("/api/v1/dags/sla/dagRuns/r1/history").json()
    assert sum("deadline missed" in (t["message"] or "") for t in history["transitions"]) == 1
    assert client.get("/api/v1/dags/sla/dagRuns/nope/deadlines").status_code == 404
