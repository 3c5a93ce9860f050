"""Airflow 2's context keys (execution_date, next_ds, prev_ds, ...) with their meaning."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import statewright.compat.airflow  # noqa: F401  (registers the keys with build_context)
from statewright.compat.airflow.legacy.context import airflow2_context
from statewright.core.timetables import CronDataIntervalTimetable
from statewright.sdk import DAG
from statewright.sdk.context import build_context
from statewright.sdk.operators import EmptyOperator

START = datetime(2024, 1, 1, tzinfo=UTC)
DAY = datetime(2024, 3, 10, tzinfo=UTC)


def context(schedule: Any, run_id: str, logical: datetime | None, **more: Any) -> dict[str, Any]:
    dag = DAG("d", schedule=schedule, start_date=START)
    return {"dag": dag, "run_id": run_id, "logical_date": logical,
            "data_interval_start": more.pop("start", logical),
            "data_interval_end": more.pop("end", logical), **more}


def test_a_scheduled_daily_run_sees_the_runs_before_and_after() -> None:
    keys = airflow2_context(context("@daily", "scheduled__2024-03-10T00:00:00+00:00", DAY))
    assert keys["execution_date"] == DAY
    assert keys["next_execution_date"] == DAY + timedelta(days=1)
    assert keys["prev_execution_date"] == DAY - timedelta(days=1)
    assert (keys["next_ds"], keys["next_ds_nodash"]) == ("2024-03-11", "20240311")
    assert (keys["prev_ds"], keys["prev_ds_nodash"]) == ("2024-03-09", "20240309")
    assert (keys["tomorrow_ds"], keys["yesterday_ds_nodash"]) == ("2024-03-11", "20240309")


def test_data_interval_schedules_follow_the_interval() -> None:
    hourly = CronDataIntervalTimetable("0 * * * *", timezone="UTC")
    at = DAY.replace(hour=5)
    keys = airflow2_context(context(hourly, "scheduled__x", at, end=at + timedelta(hours=1)))
    assert keys["next_execution_date"] == at + timedelta(hours=1)
    assert keys["prev_execution_date"] == at - timedelta(hours=1)


def test_a_timedelta_schedule_steps_by_its_delta() -> None:
    keys = airflow2_context(context(timedelta(hours=6), "scheduled__x", DAY))
    assert keys["next_execution_date"] == DAY + timedelta(hours=6)
    assert keys["prev_execution_date"] == DAY - timedelta(hours=6)


def test_a_manual_run_is_its_own_next_and_previous() -> None:
    at = DAY.replace(hour=13, minute=7)
    keys = airflow2_context(context("@daily", "manual__2024-03-10T13:07:00+00:00", at))
    assert keys["next_execution_date"] == keys["prev_execution_date"] == at
    assert keys["next_ds"] == keys["prev_ds"] == "2024-03-10"


def test_no_schedule_no_neighbours_and_no_logical_date_no_dates() -> None:
    keys = airflow2_context(context(None, "scheduled__x", DAY))
    assert keys["next_execution_date"] is None and keys["prev_ds"] is None
    assert keys["tomorrow_ds"] == "2024-03-11"
    empty = airflow2_context(context(None, "manual__x", None))
    assert empty["execution_date"] is None and empty["yesterday_ds"] is None


def test_prev_success_and_dataset_events_are_their_airflow3_keys() -> None:
    keys = airflow2_context(context(None, "manual__x", DAY, prev_data_interval_start_success=START,
                                    triggering_asset_events={"a": []}))
    assert keys["prev_execution_date_success"] == START
    assert keys["triggering_dataset_events"] == {"a": []}


@pytest.mark.parametrize("run_id", ["scheduled__2024-03-10T00:00:00+00:00", "manual__x"])
def test_every_context_has_them_and_keeps_its_own_keys(run_id: str) -> None:
    with DAG("d", schedule="@daily", start_date=START) as dag:
        task = EmptyOperator(task_id="t")
    built = build_context(dag, task, run_id=run_id, logical_date=DAY, data_interval_start=DAY,
                          data_interval_end=DAY, conf={"k": 1}, try_number=1, max_tries=1,
                          xcoms={})
    assert built["execution_date"] == DAY and built["ds"] == "2024-03-10"
    assert built["conf"] == {"k": 1}  # the run's conf, as before
    expected = "2024-03-11" if run_id.startswith("scheduled") else "2024-03-10"
    assert built["next_ds"] == expected


def test_a_timetable_that_cannot_step_back_leaves_the_key_none() -> None:
    class Stubborn(CronDataIntervalTimetable):
        def _get_prev(self, current: datetime) -> datetime:
            raise RuntimeError("no")

    keys = airflow2_context(context(Stubborn("0 0 * * *", timezone="UTC"), "scheduled__x", DAY))
    assert keys["prev_execution_date"] is None and keys["prev_ds"] is None
