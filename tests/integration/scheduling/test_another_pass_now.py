"""When the scheduler's loop goes on at once and when it waits to be woken.

A pass that only scheduled and queued task instances (each link of a chain) waits: what those
do next is another process's transition, which wakes the loop. A pass whose evaluation made
other changes (upstream_failed, skipped, removed, a retry due, an expansion), or that started
or finished runs, goes on at once: that may have given another run work."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.sdk import DAG
from statewright.services.dag_runs import trigger_dag
from statewright.services.scheduler.scheduler import LoopStats

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


@pytest.mark.parametrize(("stats", "again"), [
    (LoopStats(changed=3, queued=3), False),
    (LoopStats(), False),
    (LoopStats(changed=1, started_runs=1), True),
    (LoopStats(changed=1, finished_runs=1), True),
    (LoopStats(changed=2, steps_worked=2), True),
    (LoopStats(reaped=1), True),
    (LoopStats(changed=1, follow_up=True), True),
])
def test_which_passes_go_on_at_once(stats: LoopStats, again: bool) -> None:
    assert stats.another_pass_now is again


def _trigger(engine: Engine, dag_id: str) -> None:
    with transaction(engine) as conn:
        trigger_dag(conn, dag_id, now=NOW, actor=Actor.USER, run_id="r1")


def test_a_pass_that_schedules_a_chain_link_waits(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    with DAG("chain") as dag:
        NoopOperator(task_id="a") >> NoopOperator(task_id="b") >> NoopOperator(task_id="c")
    h.sync(dag)
    _trigger(engine, "chain")
    h.executor.hold = True
    first = h.scheduler.run_once(steps=False)
    assert first.another_pass_now  # it started the run
    link = h.scheduler.run_once(steps=False)  # a is scheduled and queued
    assert link.did_work and not link.another_pass_now
    h.executor.finish()  # a succeeds (another process's transition: it wakes the loop)
    link = h.scheduler.run_once(steps=False)  # b: scheduled and queued in its evaluation
    assert {t.task_id: t.state for t in h.tis("chain")}["b"] == "queued"
    assert link.did_work and not link.another_pass_now


def test_a_pass_that_fails_a_downstream_goes_on_at_once(harness: Callable, engine: Engine
                                                        ) -> None:
    h = harness(NOW)
    with DAG("failing") as dag:
        NoopOperator(task_id="a") >> NoopOperator(task_id="b")
        NoopOperator(task_id="other")
    h.sync(dag)
    _trigger(engine, "failing")
    h.executor.outcomes["a"] = "failed"
    h.executor.hold = True
    h.scheduler.run_once(steps=False)
    h.scheduler.run_once(steps=False)
    h.executor.finish()  # a fails, other succeeds
    stats = h.scheduler.run_once(steps=False)  # b → upstream_failed; the run fails
    assert {t.task_id: t.state for t in h.tis("failing")}["b"] == "upstream_failed"
    assert stats.follow_up and stats.another_pass_now
