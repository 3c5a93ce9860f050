"""A DAG whose task set changes: its unfinished runs follow (Airflow's verify_integrity)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import transitions_log
from statewright.sdk import DAG
from statewright.services.dag_runs import trigger_dag

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def version(*task_ids: str) -> DAG:
    with DAG("changing") as dag:
        first = NoopOperator(task_id="first")
        for t in task_ids:
            first >> NoopOperator(task_id=t)
    return dag


def by_run(h: object, run_id: str) -> dict[str, str]:
    return {t.task_id: t.state for t in h.tis("changing") if t.run_id == run_id}  # type: ignore[attr-defined]


def test_added_removed_and_restored_tasks(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    h.sync(version("keep", "drop"))
    with transaction(engine) as conn:
        trigger_dag(conn, "changing", now=h.clock(), actor=Actor.USER, run_id="running")
        trigger_dag(conn, "changing", now=h.clock(), actor=Actor.USER, run_id="queued")
        trigger_dag(conn, "changing", now=h.clock(), actor=Actor.USER, run_id="done")
    h.loop()
    assert by_run(h, "done") == {"first": "success", "keep": "success", "drop": "success"}
    with transaction(engine) as conn:
        trigger_dag(conn, "changing", now=h.clock(), actor=Actor.USER, run_id="run2")
    h.executor.hold = True
    h.loop()  # run2: "first" is queued, "keep" and "drop" wait in none

    h.sync(version("keep", "added"))  # "drop" removed, "added" added
    assert by_run(h, "run2") == {"first": "queued", "keep": "none", "drop": "none",
                                 "added": "none"}
    assert "added" not in by_run(h, "done")  # finished runs are left alone
    h.executor.hold = False
    h.executor.finish()
    h.loop()
    assert by_run(h, "run2") == {"first": "success", "keep": "success", "drop": "removed",
                                 "added": "success"}
    assert h.runs("changing")[-1].state == "success"

    # A task removed while a run waits: the scheduler marks its task instance removed.
    with transaction(engine) as conn:
        trigger_dag(conn, "changing", now=h.clock(), actor=Actor.USER, run_id="run3")
    h.executor.hold = True
    h.loop()
    h.sync(version("keep"))  # "added" removed while run3 waits
    h.executor.finish()
    h.loop()
    assert by_run(h, "run3")["added"] == "removed"
    with transaction(engine) as conn:
        trigger_dag(conn, "changing", now=h.clock(), actor=Actor.USER, run_id="run4")
    h.loop()
    h.sync(version("keep", "added"))
    # Both runs are unfinished: run4 gets a new "added", run3's removed one comes back.
    assert by_run(h, "run4")["added"] == by_run(h, "run3")["added"] == "none"
    h.executor.hold = False
    h.executor.finish()
    h.loop()
    assert by_run(h, "run4")["added"] == by_run(h, "run3")["added"] == "success"


def test_a_removed_task_instance_is_restored_in_a_running_run(harness: Callable,
                                                              engine: Engine) -> None:
    h = harness(NOW)
    h.sync(version("x", "y"))
    with transaction(engine) as conn:
        trigger_dag(conn, "changing", now=h.clock(), actor=Actor.USER, run_id="r")
    h.executor.hold = True
    h.loop()  # first: queued; x, y: none
    h.sync(version("x"))
    h.executor.finish()
    h.executor.hold = True
    h.loop()  # the scheduler removes y; x gets queued and stays there
    assert by_run(h, "r") == {"first": "success", "x": "queued", "y": "removed"}
    h.sync(version("x", "y"))
    assert by_run(h, "r")["y"] == "none"
    with engine.connect() as conn:
        history = transitions_log.for_run(conn, "changing", "r")
    assert [(e.from_state, e.to_state, e.actor) for e in history if e.task_id == "y"][-1] == (
        "removed", "none", "dag_processor")
    h.executor.hold = False
    h.executor.finish()
    h.loop()
    assert by_run(h, "r") == {"first": "success", "x": "success", "y": "success"}
