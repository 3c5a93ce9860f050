"""Cancel, pause and resume a run, through the door, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from statewright.core.states import RUN, TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import dag_callbacks as outbox
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.sdk import DAG, PythonOperator
from statewright.services.controls import (
    ControlError,
    cancel_run,
    pause_run,
    resume_run,
    settle_stopped_tries,
)

RAN: list[str] = []


def _record(name: str) -> Any:
    def fn() -> str:
        RAN.append(name)
        return name
    return fn


def _notify(context: Any) -> None:
    RAN.append("dag-callback")


def _wide() -> DAG:
    with DAG("wide", on_failure_callback=_notify, on_success_callback=_notify) as dag:
        for t in ("done", "running", "deferred", "retrying", "queued", "scheduled", "waiting"):
            PythonOperator(task_id=t, python_callable=_record(t), retries=3)
    return dag


PAUSE_FROM_A: list[Any] = []


def _a() -> str:
    RAN.append("a")
    if PAUSE_FROM_A:
        h = PAUSE_FROM_A.pop()
        pause_run(h.engine, h.run_id, now=h.clock())
    return "a"


def _chain() -> DAG:
    with DAG("chain") as dag:
        a = PythonOperator(task_id="a", python_callable=_a)
        b, c = (PythonOperator(task_id=t, python_callable=_record(t)) for t in "bc")
        a >> b >> c
    return dag


@pytest.fixture(autouse=True)
def _reset() -> None:
    RAN.clear()
    PAUSE_FROM_A.clear()


def _start(h: Any) -> None:
    run_pk = h.run().id
    with transaction(h.engine) as conn:
        door.set_dag_run_state(conn, run_pk, frm=RUN.QUEUED, to=RUN.RUNNING,
                               actor=Actor.SCHEDULER, now=h.clock())


def test_cancel_while_tasks_run_are_deferred_and_await_retry(
        harness: Any, check_history: Any, edges_of: Any) -> None:
    h = harness(_wide())
    h.new_run()
    _start(h)
    h.move("done", TI.SCHEDULED, TI.QUEUED, TI.RUNNING, TI.SUCCESS, actor=Actor.WORKER)
    h.move("running", TI.SCHEDULED, TI.QUEUED, TI.RUNNING)
    trigger_id = h.defer("deferred")
    h.move("retrying", TI.SCHEDULED, TI.QUEUED, TI.RUNNING, TI.UP_FOR_RETRY, actor=Actor.WORKER,
           next_retry_at=h.clock() + timedelta(seconds=1))
    h.move("queued", TI.SCHEDULED, TI.QUEUED)
    h.move("scheduled", TI.SCHEDULED)

    plan = cancel_run(h.engine, "r1", now=h.clock())

    assert [c.task_id for c in plan.kills] == ["running"]
    tis = h.tis()
    got = {t: (ti.state, ti.state_name) for t, ti in tis.items()}
    assert got == {
        "done": ("success", "Success"),
        "running": ("shutdown", "Cancelling"),
        "deferred": ("skipped", "Cancelled"),
        "retrying": ("skipped", "Cancelled"),
        "queued": ("skipped", "Cancelled"),
        "scheduled": ("skipped", "Cancelled"),
        "waiting": ("skipped", "Cancelled"),
    }
    assert (h.run().state, h.run().state_name) == ("cancelled", "Cancelled")
    assert tis["deferred"].trigger_id is None and not h.trigger_exists(trigger_id)
    # the executor killed the try: the task instance ends failed, named Cancelled
    with transaction(h.engine) as conn:
        settle_stopped_tries(conn, [(tis["running"].id, 1)], now=h.clock(), actor=Actor.WORKER)
    running = h.tis()["running"]
    assert (running.state, running.state_name) == ("failed", "Cancelled")
    assert edges_of(h.ti_history("running"))[-2:] == [
        ("running", "shutdown", "Cancelling", "user"),
        ("shutdown", "failed", "Cancelled", "worker")]
    with h.engine.connect() as conn:
        assert [(x.try_number, x.state, x.state_name)
                for x in ti_repo.history_of(conn, running.id)] == [(1, "failed", "Cancelled")]
    # the awaiting retry does not retry, nothing starts, and no callback is queued
    h.clock.advance(timedelta(minutes=5))
    h.loop()
    assert h.tis()["retrying"].state == "skipped" and RAN == []
    with h.engine.connect() as conn:
        assert outbox.for_run(conn, h.run().id) == []
    check_history(h.history())


def test_cancelling_a_finished_run_is_refused_and_changes_nothing(harness: Any) -> None:
    h = harness(_chain())
    h.new_run()
    h.loop()
    assert h.run().state == "success"
    count = h.history_count()
    with pytest.raises(ControlError, match=r"has finished \(success\).*Nothing was changed"):
        cancel_run(h.engine, "r1", now=h.clock())
    assert h.history_count() == count and h.run().state == "success"


def test_cancelling_twice_answers_as_the_first_time(harness: Any) -> None:
    h = harness(_chain())
    h.new_run()
    cancel_run(h.engine, "r1", now=h.clock())
    count = h.history_count()
    plan = cancel_run(h.engine, "r1", now=h.clock())
    assert plan.empty and plan.notice == "nothing changed: the run is cancelled already"
    assert h.history_count() == count


def test_pause_mid_flight_then_resume_where_it_stood(harness: Any, check_history: Any) -> None:
    h = harness(_chain())
    h.new_run()
    PAUSE_FROM_A.append(h)  # a person pauses the run while a runs
    h.loop()
    assert (h.run().state, h.run().state_name) == ("paused", "Paused")
    assert h.states()["a"] == "success" and RAN == ["a"]  # the running try finished
    for _ in range(5):  # while paused nothing new starts
        h.clock.advance(1)
        h.scheduler.run_once()
    assert h.states() == {"a": "success", "b": "none", "c": "none"} and RAN == ["a"]
    resume_run(h.engine, "r1", now=h.clock())
    assert h.run().state == "running"
    h.loop()
    assert h.run().state == "success" and RAN == ["a", "b", "c"]
    run_edges = [(r.from_state, r.to_state, r.actor) for r in h.history()
                 if r.entity == "dag_run"]
    assert run_edges[-3:] == [("running", "paused", "user"), ("paused", "running", "user"),
                              ("running", "success", "scheduler")]
    check_history(h.history())


def test_pausing_hands_queued_tries_back_and_running_ones_finish(harness: Any) -> None:
    h = harness(_chain())
    h.new_run()
    _start(h)
    h.move("a", TI.SCHEDULED, TI.QUEUED, TI.RUNNING)
    h.move("b", TI.SCHEDULED, TI.QUEUED)  # as if it had been queued (for the test)
    plan = pause_run(h.engine, "r1", now=h.clock())
    assert [(c.task_id, c.to.value) for c in plan.changes] == [("b", "scheduled")]
    assert h.states() == {"a": "running", "b": "scheduled", "c": "none"}
    h.move("a", TI.SUCCESS, actor=Actor.WORKER)  # the running try finishes and is recorded
    h.loop()
    assert h.states() == {"a": "success", "b": "scheduled", "c": "none"}  # b never queued
    assert h.run().state == "paused"
    resume_run(h.engine, "r1", now=h.clock())
    h.loop()
    assert h.run().state == "success"


def test_pause_and_resume_refuse_what_they_cannot_do(harness: Any) -> None:
    h = harness(_chain())
    h.new_run()
    plan = resume_run(h.engine, "r1", now=h.clock())
    assert plan.empty and "not paused" in (plan.notice or "")
    pause_run(h.engine, "r1", now=h.clock())  # a queued run can be paused
    assert h.run().state == "paused"
    assert pause_run(h.engine, "r1", now=h.clock()).empty
    resume_run(h.engine, "r1", now=h.clock())
    assert h.run().state == "queued"  # it never started: back to queued
    h.loop()
    with pytest.raises(ControlError, match="only a queued or running run can be paused"):
        pause_run(h.engine, "r1", now=h.clock())


def test_a_paused_dag_starts_no_new_run(harness: Any) -> None:
    h = harness(_chain())
    with transaction(h.engine) as conn:
        dag_repo.set_paused(conn, "chain", True)
    h.new_run()
    h.loop()
    assert h.run().state == "queued" and RAN == []
    with transaction(h.engine) as conn:
        dag_repo.set_paused(conn, "chain", False)
    h.loop()
    assert h.run().state == "success"
