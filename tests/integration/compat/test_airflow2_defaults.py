"""The one rule for Airflow 2's defaults, on the scheduler: Airflow 3's unless
STATEWRIGHT_AIRFLOW2_DEFAULTS=true, which brings catch-up over data intervals back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine
from tests.integration.scheduling.conftest import Harness

from statewright.compat import airflow as compat

JAN = [datetime(2026, 1, day, tzinfo=UTC) for day in range(1, 6)]
NOW = JAN[3] + timedelta(hours=12)  # 2026-01-04 12:00


def airflow2_dag() -> Any:
    with compat.activated():
        from airflow import DAG
        from airflow.operators.dummy_operator import DummyOperator

        with DAG("af2_daily", start_date=JAN[0], schedule_interval="@daily") as dag:
            DummyOperator(task_id="a")
    return dag


def intervals(h: Harness) -> list[tuple[datetime, datetime, datetime]]:
    return [(r.logical_date.replace(tzinfo=UTC), r.data_interval_start.replace(tzinfo=UTC),
             r.data_interval_end.replace(tzinfo=UTC)) for r in h.runs("af2_daily")]


def test_airflow3_defaults_run_the_latest_cron_time_only(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STATEWRIGHT_AIRFLOW2_DEFAULTS", raising=False)
    h = Harness(engine, NOW)
    h.sync(airflow2_dag())
    h.loop()
    assert intervals(h) == [(JAN[3], JAN[3], JAN[3])]


def test_airflow2_defaults_catch_up_over_data_intervals(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW2_DEFAULTS", "true")
    h = Harness(engine, NOW)
    h.sync(airflow2_dag())
    h.loop()
    # As Airflow 2: one run per complete day since the start, each at its interval's start.
    assert intervals(h) == [(JAN[0], JAN[0], JAN[1]), (JAN[1], JAN[1], JAN[2]),
                            (JAN[2], JAN[2], JAN[3])]
    assert all(r.state == "success" for r in h.runs("af2_daily"))
