"""What an evaluation schedules is queued in the same write transaction, within the same
limits: one transaction less per link of a chain. On PostgreSQL, where several schedulers
share the pools, that transaction takes the pool rows (the critical section's lock) only when
no one holds them, and queues no row another transaction holds: it never waits while it holds
task-instance rows, so it can deadlock with no other scheduler."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, text
from tests.noop import NoopOperator

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import pools as pool_repo
from statewright.db.repositories import scheduling as sched_repo
from statewright.sdk import DAG
from statewright.services.dag_runs import trigger_dag

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _chained(h: Any, engine: Engine) -> None:
    """``first`` has succeeded; its three downstreams (in a pool of two slots) wait for the
    evaluation."""
    with transaction(engine) as conn:
        pool_repo.set_pool(conn, "two", 2)
    with DAG("chained") as dag:
        first = NoopOperator(task_id="first")
        for i in range(3):
            first >> NoopOperator(task_id=f"next{i}", pool="two")
    h.sync(dag)
    with transaction(engine) as conn:
        trigger_dag(conn, "chained", now=h.clock(), actor=Actor.USER, run_id="r1")
    h.executor.hold = True
    h.loop()  # first is queued and held
    h.executor.finish()  # first succeeds


def _downstream_states(h: Any) -> list[str]:
    return sorted(t.state for t in h.tis("chained") if t.task_id != "first")


def test_the_evaluation_queues_what_it_scheduled(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    _chained(h, engine)
    h.scheduler._schedule_running_runs(h.clock())  # the evaluation alone
    assert _downstream_states(h) == ["queued", "queued", "scheduled"]  # the pool has two
    assert sorted(h.executor.held) == sorted(
        t.id for t in h.tis("chained") if t.state == "queued")
    for _ in range(3):
        h.loop()
        h.executor.finish()
    h.loop()
    assert {t.state for t in h.tis("chained")} == {"success"}


@contextmanager
def _held(engine: Engine, statement: str) -> Iterator[None]:
    """Another transaction (another scheduler) holding rows until the block ends."""
    with engine.connect() as other:
        other.begin()
        other.execute(text(statement)).all()
        try:
            yield
        finally:
            other.rollback()


def test_a_held_pool_row_leaves_queueing_to_the_critical_section(pg_harness: Callable,
                                                                 pg_engine: Engine) -> None:
    h = pg_harness(NOW)
    _chained(h, pg_engine)
    with _held(pg_engine, "SELECT name FROM pool WHERE name = 'two' FOR UPDATE"):
        done = threading.Event()
        evaluation = threading.Thread(
            target=lambda: (h.scheduler._schedule_running_runs(h.clock()), done.set()))
        evaluation.start()
        assert done.wait(30), "the evaluation waited for the pool row"
        evaluation.join()
        assert _downstream_states(h) == ["scheduled"] * 3
        assert not h.executor.held
    h.scheduler.run_once(steps=False)  # the pass's critical section queues them
    assert _downstream_states(h) == ["queued", "queued", "scheduled"]


def test_a_row_another_transaction_holds_is_left_out_not_waited_for(pg_engine: Engine,
                                                                    pg_harness: Callable) -> None:
    h = pg_harness(NOW)
    _chained(h, pg_engine)
    ids = {t.task_id: t.id for t in h.tis("chained")}
    with _held(pg_engine, f"SELECT id FROM task_instance WHERE id = {ids['next1']} FOR UPDATE"):
        with transaction(pg_engine) as conn:
            got = sched_repo.lock_unheld(conn, [ids["next0"], ids["next1"], ids["next2"]])
    assert got == [ids["next0"], ids["next2"]]
