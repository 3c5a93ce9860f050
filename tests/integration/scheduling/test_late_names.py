"""Late: runs and task instances waiting past their threshold are named Late; the type stays."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

from click.testing import CliRunner
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import pools as pool_repo
from statewright.db.repositories import transitions_log
from statewright.sdk import DAG
from statewright.services.dag_runs import trigger_dag

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def test_a_queued_run_past_its_threshold_is_late_until_it_starts(harness: Callable,
                                                                 engine: Engine) -> None:
    h = harness(NOW)
    with DAG("waits") as dag:
        NoopOperator(task_id="a")
    h.sync(dag, paused=True)  # its run cannot start
    with transaction(engine) as conn:
        trigger_dag(conn, "waits", now=h.clock(), actor=Actor.USER, run_id="r1")
    h.clock.advance(59)
    h.loop()
    assert [(r.state, r.state_name) for r in h.runs("waits")] == [("queued", "Queued")]
    h.clock.advance(2)
    h.loop()
    (run,) = h.runs("waits")
    assert (run.state, run.state_name) == ("queued", "Late")
    with engine.connect() as conn:
        last = transitions_log.for_run(conn, "waits", "r1")[-1]
    assert (last.from_state, last.to_state, last.name) == ("queued", "queued", "Late")
    with transaction(engine) as conn:
        dag_repo.set_paused(conn, "waits", False)
    h.loop()
    (run,) = h.runs("waits")
    assert (run.state, run.state_name) == ("success", "Success")


def test_task_instances_waiting_for_a_slot_are_late(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    with transaction(engine) as conn:
        pool_repo.set_pool(conn, "closed", 0)
    with DAG("starved") as dag:
        NoopOperator(task_id="a", pool="closed")
    h.sync(dag)
    with transaction(engine) as conn:
        trigger_dag(conn, "starved", now=h.clock(), actor=Actor.USER, run_id="r1")
    h.loop()
    assert [(t.state, t.state_name) for t in h.tis("starved")] == [("scheduled", "Scheduled")]
    h.clock.advance(61)
    h.loop()
    assert [(t.state, t.state_name) for t in h.tis("starved")] == [("scheduled", "Late")]
    with transaction(engine) as conn:
        pool_repo.set_pool(conn, "closed", 1)
    h.executor.hold = True
    h.loop()
    assert [(t.state, t.state_name) for t in h.tis("starved")] == [("queued", "Queued")]
    h.clock.advance(61)
    h.loop()
    assert [(t.state, t.state_name) for t in h.tis("starved")] == [("queued", "Late")]
    h.executor.finish()
    h.loop()
    assert [(t.state, t.state_name) for t in h.tis("starved")] == [("success", "Success")]


def test_dags_late_lists_them(harness: Callable, engine: Engine,
                              cli_env: dict[str, str]) -> None:
    from statewright.cli.main import cli

    h = harness(NOW)
    with DAG("late_cli") as dag:
        NoopOperator(task_id="a")
    h.sync(dag, paused=True)
    with transaction(engine) as conn:
        trigger_dag(conn, "late_cli", now=h.clock(), actor=Actor.USER, run_id="r1")
    runner = CliRunner()
    assert "nothing is late" in runner.invoke(cli, ["dags", "late"], env=cli_env).output
    h.clock.advance(120)
    h.loop()
    result = runner.invoke(cli, ["dags", "late", "-o", "json"], env=cli_env)
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert [(r["dag_id"], r["run_id"]) for r in body["runs"]] == [("late_cli", "r1")]
    table = runner.invoke(cli, ["dags", "late"], env=cli_env)
    assert "late_cli" in table.output and "Late runs" in table.output
