"""The REST API on timetables and partitions: the schedule in words, and a triggered run's
partition key (refused when it does not match the DAG's timetable, nothing created)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from api_helpers import store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.sdk import DAG, CronPartitionTimetable, EmptyOperator


def test_partition_key_of_a_triggered_run(client: TestClient, engine: Engine,
                                          snapshot: Callable[[], tuple[int, int, int]]) -> None:
    with DAG("hourly", schedule=CronPartitionTimetable("0 * * * *", timezone="UTC"),
             start_date=datetime(2026, 1, 1, tzinfo=UTC)) as dag:
        EmptyOperator(task_id="a")
    store_dag(engine, dag)
    detail = client.get("/api/v1/dags/hourly").json()
    assert detail["schedule_description"] == "Every hour at minute 0 (UTC)"
    ok = client.post("/api/v1/dags/hourly/dagRuns",
                     json={"dag_run_id": "r1", "partition_key": "2026-01-01T05:00:00"})
    assert ok.status_code == 200, ok.text
    assert ok.json()["partition_key"] == "2026-01-01T05:00:00"
    before = snapshot()
    bad = client.post("/api/v1/dags/hourly/dagRuns",
                      json={"dag_run_id": "r2", "partition_key": "2026-01-01T05:30:00"})
    assert bad.status_code == 422
    assert "not a time of the schedule '0 * * * *'" in bad.json()["detail"]
    assert snapshot() == before


def test_the_dag_page_says_the_schedule_in_words(client: TestClient, engine: Engine) -> None:
    with DAG("weekdays", schedule="30 6 * * 1-5",
             start_date=datetime(2026, 1, 1, tzinfo=UTC)) as dag:
        EmptyOperator(task_id="a")
    store_dag(engine, dag)
    page = client.get("/dags/weekdays")
    assert page.status_code == 200
    assert ('id="dag-schedule-words">(At 06:30, on weekdays (Monday to Friday) (UTC))'
            in page.text)
