"""max_consecutive_failed_dag_runs (Airflow 2.9+/3): the scheduler pauses a DAG whose last N
runs ended failed, and records the pause (owner scheduler, event paused, the runs) in the
audit log, which the CLI and the API show. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.cli.main import cli
from statewright.core.errors import DagDefinitionError
from statewright.core.failed_runs import pauses_dag
from statewright.db.repositories import audit
from statewright.sdk import DAG

JAN1 = datetime(2026, 1, 1, tzinfo=UTC)
DAY = 86400


def _daily(limit: int | None, dag_id: str = "flaky") -> DAG:
    with DAG(dag_id, schedule="@daily", start_date=JAN1, catchup=True,
             max_consecutive_failed_dag_runs=limit) as dag:
        NoopOperator(task_id="work")
    return dag


def _events(engine: Engine, dag_id: str = "flaky") -> list[Any]:
    with engine.connect() as conn:
        rows, _ = audit.page(conn, limit=10, offset=0, dag_id=dag_id)
    return rows


def test_the_rule() -> None:
    assert not pauses_dag(["failed"] * 5, 0)
    assert pauses_dag(["failed", "failed"], 2)
    assert pauses_dag(["failed", "failed", "success"], 2)
    assert not pauses_dag(["failed"], 2)  # fewer runs than the limit
    assert not pauses_dag(["running", "failed", "failed"], 2)  # a newer run has not ended
    assert not pauses_dag(["failed", "success"], 2)


def test_argument_checked() -> None:
    assert _daily(None).max_consecutive_failed_dag_runs == 0
    assert "max_consecutive_failed_dag_runs" not in _daily(None).serialize()
    assert _daily(3).serialize()["max_consecutive_failed_dag_runs"] == 3
    with pytest.raises(DagDefinitionError, match="max_consecutive_failed_dag_runs"):
        _daily(-1)
    with pytest.raises(DagDefinitionError, match="max_consecutive_failed_dag_runs"):
        _daily("3")  # type: ignore[arg-type]


def test_paused_after_three_failed_runs_in_a_row(harness: Callable, engine: Engine,
                                                 cli_env: dict[str, str]) -> None:
    h = harness(datetime(2026, 1, 2, 1, tzinfo=UTC))  # two runs due: Jan 1 and Jan 2
    h.sync(_daily(3))
    h.executor.outcomes = {"work": "failed"}
    h.loop()
    assert [r.state for r in h.runs("flaky")] == ["failed", "failed"]
    assert not h.dag_row("flaky").is_paused  # two failed runs, the limit is three
    assert _events(engine) == []

    h.clock.advance(DAY)
    h.loop()
    runs = h.runs("flaky")
    assert [r.state for r in runs] == ["failed"] * 3
    assert h.dag_row("flaky").is_paused
    [event] = _events(engine)
    assert (event.username, event.action, event.outcome) == ("scheduler", "paused", "success")
    assert "max_consecutive_failed_dag_runs=3" in event.detail
    assert all(r.run_id in event.detail for r in runs)

    h.clock.advance(3 * DAY)  # paused: no new run
    h.loop()
    assert len(h.runs("flaky")) == 3

    out = CliRunner().invoke(cli, ["dags", "events", "flaky", "-o", "json"], env=cli_env,
                             catch_exceptions=False)
    assert out.exit_code == 0, out.output
    [shown] = json.loads(out.output)
    assert shown["owner"] == "scheduler" and shown["event"] == "paused"
    assert "the last 3 DAG runs ended failed" in shown["detail"]


def test_a_success_between_failures_keeps_it_running(harness: Callable,
                                                     engine: Engine) -> None:
    h = harness(datetime(2026, 1, 1, 1, tzinfo=UTC))
    h.sync(_daily(2))
    h.executor.outcomes = {"work": "failed"}
    h.loop()
    h.executor.outcomes = {}
    h.clock.advance(DAY)
    h.loop()
    h.executor.outcomes = {"work": "failed"}
    h.clock.advance(DAY)
    h.loop()
    assert [r.state for r in h.runs("flaky")] == ["failed", "success", "failed"]
    assert not h.dag_row("flaky").is_paused
    h.clock.advance(DAY)
    h.loop()
    assert [r.state for r in h.runs("flaky")][-2:] == ["failed", "failed"]
    assert h.dag_row("flaky").is_paused


def test_off_by_default(harness: Callable, engine: Engine) -> None:
    h = harness(datetime(2026, 1, 6, 1, tzinfo=UTC))
    h.sync(_daily(None))
    h.executor.outcomes = {"work": "failed"}
    h.loop()
    assert [r.state for r in h.runs("flaky")] == ["failed"] * 6
    assert not h.dag_row("flaky").is_paused
    assert _events(engine) == []
