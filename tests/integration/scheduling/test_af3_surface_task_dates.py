"""A task's own start_date / end_date (Airflow 2.10 and 3.3's DagRun task filter): a run whose
logical date is outside them gets no task instance of the task; a task downstream of it is
never scheduled and the run ends failed (Airflow's deadlock). Airflow 3.3.2's dag.test() of
the DAG below at 2025-01-06 ends failed with {'a': 'success', 'c': None} (recorded with a real
Airflow). dag.test() and the scheduler, SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.errors import DagDefinitionError
from statewright.core.task_dates import task_in_run
from statewright.sdk import DAG

JAN1 = datetime(2025, 1, 1, tzinfo=UTC)
FEB1 = datetime(2025, 2, 1, tzinfo=UTC)


def _dag(schedule: str | None = None) -> DAG:
    with DAG("dated", schedule=schedule, start_date=JAN1, catchup=schedule is not None) as dag:
        late = NoopOperator(task_id="late", start_date=datetime(2025, 1, 3, tzinfo=UTC))
        NoopOperator(task_id="a") >> late >> NoopOperator(task_id="c")
        NoopOperator(task_id="ended", end_date=datetime(2025, 1, 2, tzinfo=UTC))
    return dag


def test_the_rule() -> None:
    window = (datetime(2025, 1, 3, tzinfo=UTC), datetime(2025, 1, 5, tzinfo=UTC))
    assert not task_in_run(window, JAN1, "manual")
    assert task_in_run(window, datetime(2025, 1, 3, tzinfo=UTC), "scheduled")
    assert task_in_run(window, datetime(2025, 1, 5, tzinfo=UTC), "scheduled")
    assert not task_in_run(window, datetime(2025, 1, 6, tzinfo=UTC), "scheduled")
    assert task_in_run(window, JAN1, "backfill")  # backfills get every task
    assert task_in_run(window, None, "manual")
    assert task_in_run(None, JAN1, "manual")


def test_dates_join_the_dag_as_in_airflow() -> None:
    with DAG("z", schedule=None, start_date=JAN1, end_date=FEB1,
             timezone="Europe/Paris") as dag:
        early = NoopOperator(task_id="early", start_date=datetime(2024, 6, 1, tzinfo=UTC),
                              end_date=datetime(2026, 1, 1, tzinfo=UTC))
        naive = NoopOperator(task_id="naive", start_date=datetime(2025, 1, 10))
        plain = NoopOperator(task_id="plain")
    assert (early.start_date, early.end_date) == (JAN1, FEB1)  # the later start, earlier end
    assert (plain.start_date, plain.end_date) == (JAN1, FEB1)
    assert naive.start_date == datetime(2025, 1, 10, tzinfo=ZoneInfo("Europe/Paris"))
    tasks = {t["task_id"]: t for t in dag.serialize()["tasks"]}
    assert "start_date" not in tasks["plain"] and "start_date" not in tasks["early"]
    assert tasks["naive"]["start_date"].startswith("2025-01-10T00:00:00+01:00")
    with pytest.raises(DagDefinitionError, match="start_date must be a datetime"):
        NoopOperator(task_id="bad", start_date="2025-01-01")


def test_dag_test_before_a_tasks_start_date() -> None:
    result = _dag().test(logical_date=datetime(2025, 1, 2, tzinfo=UTC))
    # At 2025-01-02: "late" (from Jan 3) has no task instance; "ended" (to Jan 2) has one.
    assert result.states == {"a": "success", "c": "none", "ended": "success"}
    assert result.state == "failed"
    after = _dag().test(logical_date=datetime(2025, 1, 6, tzinfo=UTC))
    assert after.states == {"a": "success", "late": "success", "c": "success"}
    assert after.state == "success"


def test_scheduled_runs_follow_the_dates(harness: Callable, engine: Engine) -> None:
    h = harness(datetime(2025, 1, 3, 1, tzinfo=UTC))  # runs Jan 1, 2, 3
    h.sync(_dag("@daily"))
    h.loop()
    runs = {r.id: r for r in h.runs("dated")}
    by_day: dict[int, dict[str, str]] = {}
    for t in h.tis("dated"):
        by_day.setdefault(runs[t.dag_run_id].logical_date.day, {})[t.task_id] = t.state
    assert by_day == {
        1: {"a": "success", "c": "none", "ended": "success"},
        2: {"a": "success", "c": "none", "ended": "success"},
        3: {"a": "success", "late": "success", "c": "success"},
    }
    assert {r.logical_date.day: r.state for r in runs.values()} == {
        1: "failed", 2: "failed", 3: "success"}


def test_a_run_before_the_dags_start_date_has_no_task_instances() -> None:
    """Airflow 3.3.2's dag.test() of its state store examples (start 2026-01-01) at 2025-01-06
    ends success with no task instance (expected.json); a task's start is the DAG's."""
    with DAG("future", schedule=None, start_date=datetime(2026, 1, 1, tzinfo=UTC)) as dag:
        NoopOperator(task_id="a") >> NoopOperator(task_id="b")
    before = dag.test(logical_date=datetime(2025, 1, 6, tzinfo=UTC))
    assert (before.state, before.states) == ("success", {})
    after = dag.test(logical_date=datetime(2026, 1, 6, tzinfo=UTC))
    assert after.states == {"a": "success", "b": "success"}
