"""A scheduler that dies leaves task instances queued to its local executor: a surviving
scheduler sends them back to scheduled once the dead one's job stops heartbeating, instead of
after the queued timeout (10 minutes by default). Found by the chaos suite's takeover figure."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import jobs as job_repo
from statewright.sdk import DAG
from statewright.services.dag_runs import trigger_dag

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
PEER = "local:peer-host:4242"


def _queued_to_peer(harness: Callable, engine: Engine) -> object:
    h = harness(NOW)
    with DAG("held") as dag:
        NoopOperator(task_id="a")
    h.sync(dag)
    h.executor.identity = PEER  # the peer's executor queues it, then the peer dies
    h.executor.hold = True
    with transaction(engine) as conn:
        trigger_dag(conn, "held", now=h.clock(), actor=Actor.USER, run_id="r1")
        job_repo.register(conn, job_type="scheduler", hostname="peer-host", pid=4242,
                          capacity=None, now=h.clock())
    h.loop()
    assert [(t.state, t.executor) for t in h.tis("held")] == [("queued", PEER)]
    return h


def test_a_live_peers_queued_task_instances_are_left_alone(harness: Callable,
                                                           engine: Engine) -> None:
    h = _queued_to_peer(harness, engine)
    h.clock.advance(30)  # within the zombie threshold (60 s) of its last heartbeat
    assert h.scheduler.reap(h.clock()) == 0
    assert [t.state for t in h.tis("held")] == ["queued"]


def test_a_dead_peers_queued_task_instances_go_back_to_scheduled(harness: Callable,
                                                                 engine: Engine) -> None:
    h = _queued_to_peer(harness, engine)
    h.clock.advance(61)  # the peer's job is silent past the threshold; queued timeout is 600 s
    assert h.scheduler.reap(h.clock()) == 1
    (ti,) = h.tis("held")
    assert ti.state == "scheduled"
    assert "scheduler whose executor held it is gone" in ti.state_message
