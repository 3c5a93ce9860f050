"""GET /api/v1/dags/{dag_id}/calendar bounds the runs a schedule plans: a minutely schedule
asked about a century answers at most 1,000, counted from the lower bound on; a date out of
range in UTC is a clear 422."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from api_helpers import store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.sdk import DAG, PythonOperator
from statewright.services.scheduler.dag_schedule import next_fields, schedule_spec


def test_a_minutely_schedule_plans_at_most_a_thousand_runs(client: TestClient,
                                                          engine: Engine) -> None:
    with DAG("cal_often", schedule="* * * * *",
             start_date=datetime(2026, 1, 1, tzinfo=UTC)) as dag:
        PythonOperator(task_id="only", python_callable=print)
    serialized = store_dag(engine, dag)
    with transaction(engine) as conn:
        info = schedule_spec(serialized).next_info(None, datetime(2026, 3, 1, tzinfo=UTC))
        dag_repo.set_next_dagrun(conn, "cal_often", next_fields(info))
    # far after the next run, up to 2099: counted from the lower bound on, 1,000 at most
    body = client.get("/api/v1/dags/cal_often/calendar", params={
        "logical_date_gte": "2026-06-01T00:00:00Z",
        "logical_date_lte": "2099-01-01T00:00:00Z"}).json()
    assert body["dag_runs"] == [{"date": "2026-06-01T00:00:00Z", "state": "planned",
                                 "count": 1000}]
    hourly = client.get("/api/v1/dags/cal_often/calendar", params={
        "logical_date_gte": "2026-06-01T00:00:00Z", "logical_date_lt": "2026-06-01T02:00:00Z",
        "granularity": "hourly"}).json()["dag_runs"]
    assert [(e["date"], e["count"]) for e in hourly] == [
        ("2026-06-01T00:00:00Z", 60), ("2026-06-01T01:00:00Z", 60)]


@pytest.mark.parametrize("moment", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_a_date_out_of_range_in_utc_is_a_clear_422(client: TestClient, engine: Engine,
                                                    moment: str) -> None:
    with DAG("cal_edge", schedule=None) as dag:
        PythonOperator(task_id="only", python_callable=print)
    store_dag(engine, dag)
    answer = client.get("/api/v1/dags/cal_edge/calendar", params={"logical_date_gte": moment})
    assert answer.status_code == 422
    assert "out of range" in answer.json()["detail"]
