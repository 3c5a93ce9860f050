"""GET /api/v1/dags/{dag_id}/calendar: runs counted per day (or hour) and state, the runs the
schedule plans after the next one, and clear 4xx answers to bad input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from api_helpers import store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.sdk import DAG
from statewright.services.dag_runs import create_run
from statewright.services.dag_view import DagView
from statewright.services.scheduler.dag_schedule import next_fields, schedule_spec

START = datetime(2026, 3, 1, tzinfo=UTC)


def _calendar_dag() -> DAG:
    with DAG("cal", schedule="@daily", start_date=datetime(2026, 1, 1, tzinfo=UTC)) as dag:
        NoopOperator(task_id="only")
    return dag


def _runs(engine: Engine, dates: list[datetime], next_run: datetime | None) -> dict[str, Any]:
    """Queued runs of ``cal`` at the given logical dates; the DAG's next run set as the
    scheduler would (``next_run``)."""
    serialized = store_dag(engine, _calendar_dag())
    view = DagView(serialized, dag_repo.dag_hash(serialized))
    with transaction(engine) as conn:
        for i, when in enumerate(dates):
            create_run(conn, view, now=utcnow(), actor=Actor.SCHEDULER, run_id=f"r{i}",
                       run_type="scheduled", logical_date=when, one_per_logical_date=False)
        if next_run is not None:
            info = schedule_spec(serialized).next_info(None, next_run)
            dag_repo.set_next_dagrun(conn, "cal", next_fields(info))
    return serialized


def test_runs_are_counted_per_day_and_state(client: TestClient, engine: Engine) -> None:
    _runs(engine, [START, START + timedelta(hours=5), START + timedelta(days=4)], None)
    client.patch("/api/v1/dags/cal", json={"is_paused": True})
    body = client.get("/api/v1/dags/cal/calendar").json()
    assert body == {"total_entries": 2, "dag_runs": [
        {"date": "2026-03-01T00:00:00Z", "state": "queued", "count": 2},
        {"date": "2026-03-05T00:00:00Z", "state": "queued", "count": 1}]}
    hourly = client.get("/api/v1/dags/cal/calendar?granularity=hourly").json()["dag_runs"]
    assert [(e["date"], e["count"]) for e in hourly] == [
        ("2026-03-01T00:00:00Z", 1), ("2026-03-01T05:00:00Z", 1), ("2026-03-05T00:00:00Z", 1)]
    bounded = client.get("/api/v1/dags/cal/calendar", params={
        "logical_date_gte": "2026-03-02T00:00:00Z", "logical_date_lte": "2026-12-31T00:00:00Z"})
    assert [e["date"] for e in bounded.json()["dag_runs"]] == ["2026-03-05T00:00:00Z"]


def test_the_schedule_plans_the_days_after_the_next_run(client: TestClient,
                                                        engine: Engine) -> None:
    # the next run is 2026-03-10's: ten days up to the 19th are planned, one a day
    _runs(engine, [START], datetime(2026, 3, 10, 12, tzinfo=UTC))
    body = client.get("/api/v1/dags/cal/calendar", params={
        "logical_date_gte": "2026-03-01T00:00:00Z",
        "logical_date_lt": "2026-03-20T00:00:00Z"}).json()
    planned = [e for e in body["dag_runs"] if e["state"] == "planned"]
    assert {e["count"] for e in planned} == {1}
    assert [e["date"][:10] for e in planned] == [f"2026-03-{d:02d}" for d in range(10, 20)]
    assert body["dag_runs"][0] == {"date": "2026-03-01T00:00:00Z", "state": "queued", "count": 1}
    # a paused DAG plans nothing
    assert client.patch("/api/v1/dags/cal", json={"is_paused": True}).status_code == 200
    paused = client.get("/api/v1/dags/cal/calendar").json()["dag_runs"]
    assert [e["state"] for e in paused] == ["queued"]


@pytest.mark.parametrize(("query", "status", "words"), [
    ({"logical_date_gte": "2026-03-01T00:00:00"}, 422, "has no time zone"),
    ({"logical_date_gte": "yesterday"}, 422, "logical_date_gte"),
    ({"logical_date_gte": "2026-04-01T00:00:00Z",
      "logical_date_lte": "2026-03-01T00:00:00Z"}, 422, "after its upper bound"),
    ({"granularity": "weekly"}, 422, "granularity"),
])
def test_bad_input_is_a_clear_4xx(client: TestClient, engine: Engine, query: dict[str, str],
                                  status: int, words: str) -> None:
    _runs(engine, [START], None)
    answer = client.get("/api/v1/dags/cal/calendar", params=query)
    assert answer.status_code == status
    assert words in answer.json()["detail"]


def test_an_unknown_dag_is_404_and_credentials_are_needed(client: TestClient, engine: Engine,
                                                      anonymous: TestClient) -> None:
    answer = client.get("/api/v1/dags/nope/calendar")
    assert answer.status_code == 404 and "nope" in answer.json()["detail"]
    assert anonymous.get("/api/v1/dags/nope/calendar").status_code == 401
