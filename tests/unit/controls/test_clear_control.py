"""Clear: Airflow's clear semantics through the one door, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import xcoms as xcom_repo
from statewright.db.tables import task_reschedule
from statewright.sdk import DAG, PythonOperator
from statewright.services.controls import (
    ControlError,
    clear_task_instances,
    settle_abandoned,
    settle_stopped_tries,
)

CALLS: dict[str, int] = {}
FAIL: set[str] = set()


def _work(name: str) -> Any:
    def fn() -> str:
        CALLS[name] = CALLS.get(name, 0) + 1
        if name in FAIL:
            raise ValueError(f"{name} fails")
        return f"{name}-{CALLS[name]}"
    return fn


def _diamond() -> DAG:
    with DAG("diamond") as dag:
        a, b, c, d = (PythonOperator(task_id=t, python_callable=_work(t), retries=1,
                                     retry_delay=0) for t in "abcd")
        a >> [b, c] >> d
    return dag


@pytest.fixture(autouse=True)
def _reset() -> None:
    CALLS.clear()
    FAIL.clear()


def _failed_diamond(harness: Any) -> Any:
    h = harness(_diamond())
    h.new_run()
    FAIL.add("b")
    h.loop()
    assert h.states() == {"a": "success", "b": "failed", "c": "success",
                          "d": "upstream_failed"}
    assert h.run().state == "failed"
    FAIL.clear()
    return h


def test_clear_with_downstream_on_a_diamond_reruns_through_dependencies(
        harness: Any, check_history: Any, edges_of: Any) -> None:
    h = _failed_diamond(harness)
    before = h.tis()
    assert before["b"].try_number == 2 and before["b"].max_tries == 1  # retried once, failed

    plan = clear_task_instances(h.engine, "r1", task_regexes=["^b$"], downstream=True,
                                now=h.clock())

    assert [(c.task_id, c.frm.value, [s.value for s in c.path]) for c in plan.changes] == [
        ("b", "failed", ["restarting", "none"]), ("d", "upstream_failed", ["restarting", "none"])]
    tis = h.tis()
    assert {t: tis[t].state for t in "abcd"} == {"a": "success", "b": "none", "c": "success",
                                                 "d": "none"}
    assert tis["b"].max_tries == 2 + 1  # try_number + retries: the retries are given back
    run = h.run()
    assert (run.state, run.clear_number, run.start_date, run.end_date) == ("queued", 1, None,
                                                                           None)
    with h.engine.connect() as conn:  # results of cleared tasks are deleted, others kept
        xcoms = xcom_repo.get_return_values(conn, [(run.id, t) for t in "abcd"])
    assert set(xcoms) == {(run.id, "a"), (run.id, "c")}

    h.loop()
    assert h.run().state == "success"
    tis = h.tis()
    assert (tis["b"].state, tis["b"].try_number) == ("success", 3)  # the try number keeps counting
    assert (tis["a"].try_number, CALLS["a"], CALLS["c"]) == (1, 1, 1)  # untouched tasks
    with h.engine.connect() as conn:
        tries = [(x.try_number, x.state) for x in ti_repo.history_of(conn, tis["b"].id)]
    assert tries == [(1, "up_for_retry"), (2, "failed"), (3, "success")]

    rows = h.history()
    check_history(rows)
    assert edges_of(rows, "b")[-6:] == [
        ("failed", "restarting", "Restarting", "user"), ("restarting", "none", "Pending", "user"),
        ("none", "scheduled", "Scheduled", "scheduler"),
        ("scheduled", "queued", "Queued", "scheduler"),
        ("queued", "running", "Retrying", "executor"),
        ("running", "success", "Success", "worker")]
    run_edges = [(r.from_state, r.to_state, r.actor) for r in rows if r.entity == "dag_run"]
    assert ("failed", "queued", "user") in run_edges
    assert run_edges[-1] == ("running", "success", "scheduler")


def test_clear_upstream_and_only_failed_select_as_airflow_does(harness: Any) -> None:
    h = _failed_diamond(harness)
    plan = clear_task_instances(h.engine, "r1", task_regexes=["^d$"], upstream=True,
                                dry_run=True, now=h.clock())
    assert [c.task_id for c in plan.changes] == ["a", "b", "c", "d"]
    plan = clear_task_instances(h.engine, "r1", only_failed=True, dry_run=True, now=h.clock())
    assert [c.task_id for c in plan.changes] == ["b", "d"]
    plan = clear_task_instances(h.engine, "r1", task_regexes=["^(a|c)$"], only_failed=True,
                                dry_run=True, now=h.clock())
    assert plan.changes == [] and plan.notice


def test_dry_run_shows_exactly_what_the_clear_does_and_changes_nothing(harness: Any) -> None:
    h = _failed_diamond(harness)
    states, history = h.states(), h.history_count()
    dry = clear_task_instances(h.engine, "r1", task_regexes=["b"], downstream=True,
                               dry_run=True, now=h.clock())
    assert (h.states(), h.history_count(), h.run().state) == (states, history, "failed")
    text = "\n".join(dry.describe())
    assert "task b: failed -> restarting -> none" in text and "run: failed -> queued" in text
    done = clear_task_instances(h.engine, "r1", task_regexes=["b"], downstream=True,
                                now=h.clock())
    assert done.describe() == dry.describe()
    changed = {r.task_id for r in h.history()[-5:] if r.task_id}
    assert changed == {c.task_id for c in dry.changes}


def test_clearing_a_task_id_that_does_not_exist_is_a_clear_error(harness: Any) -> None:
    h = _failed_diamond(harness)
    states, history = h.states(), h.history_count()
    with pytest.raises(ControlError, match=r"No task of DAG diamond .* matches -t 'nope'.*"
                                           r"a, b, c, d"):
        clear_task_instances(h.engine, "r1", task_regexes=["nope"], now=h.clock())
    with pytest.raises(ControlError, match="not a valid regular expression"):
        clear_task_instances(h.engine, "r1", task_regexes=["("], now=h.clock())
    with pytest.raises(ControlError, match="No DAG run with run id 'r9'"):
        clear_task_instances(h.engine, "r9", now=h.clock())
    assert (h.states(), h.history_count()) == (states, history)


def test_clearing_a_deferred_task_drops_its_trigger(harness: Any, check_history: Any) -> None:
    h = harness(_diamond())
    h.new_run()
    trigger_id = h.defer("a")
    assert h.tis()["a"].trigger_id == trigger_id
    clear_task_instances(h.engine, "r1", task_regexes=["^a$"], now=h.clock())
    a = h.tis()["a"]
    assert (a.state, a.trigger_id, a.next_method) == ("none", None, None)
    assert not h.trigger_exists(trigger_id)  # no orphan left behind
    assert [(r.from_state, r.to_state, r.actor) for r in h.ti_history("a")][-1] == (
        "deferred", "none", "user")
    check_history(h.history())


def test_clearing_unfinished_task_instances_puts_them_back_to_none(harness: Any) -> None:
    h = harness(_diamond())
    h.new_run()
    h.move("a", TI.SCHEDULED, TI.QUEUED, TI.RUNNING, TI.UP_FOR_RETRY, actor=Actor.WORKER,
           next_retry_at=h.clock() + timedelta(hours=1))
    h.move("b", TI.SCHEDULED, TI.QUEUED)
    h.move("c", TI.SCHEDULED, TI.QUEUED, TI.RUNNING, TI.UP_FOR_RESCHEDULE, actor=Actor.WORKER,
           reschedule_date=h.clock() + timedelta(hours=1))
    c_id = h.tis()["c"].id
    with transaction(h.engine) as conn:
        conn.execute(task_reschedule.insert().values(
            task_instance_id=c_id, try_number=1, start_date=h.clock(),
            end_date=h.clock(), duration=0.0, reschedule_date=h.clock()))
    plan = clear_task_instances(h.engine, "r1", task_regexes=["a|b|c"], now=h.clock())
    assert {c.task_id: [s.value for s in c.path] for c in plan.changes} == {
        "a": ["none"], "b": ["none"], "c": ["none"]}
    tis = h.tis()
    assert {t: tis[t].state for t in "abc"} == {"a": "none", "b": "none", "c": "none"}
    assert (tis["a"].next_retry_at, tis["c"].reschedule_date) == (None, None)
    with h.engine.connect() as conn:
        assert conn.execute(select(task_reschedule)).all() == []
    assert h.run().state == "queued"  # an unfinished run keeps its state


def test_a_running_task_goes_restarting_then_none_once_its_try_stopped(
        harness: Any, check_history: Any) -> None:
    h = harness(_diamond())
    h.new_run()
    h.move("a", TI.SCHEDULED, TI.QUEUED, TI.RUNNING)
    plan = clear_task_instances(h.engine, "r1", task_regexes=["^a$"], now=h.clock())
    assert plan.kills and plan.kills[0].task_id == "a"
    a = h.tis()["a"]
    assert (a.state, a.try_number, a.max_tries) == ("restarting", 1, 2)
    with transaction(h.engine) as conn:  # what the executor does once it killed the try
        reached = settle_stopped_tries(conn, [(a.id, 1)], now=h.clock(), actor=Actor.WORKER)
    assert reached == {a.id: TI.NONE}
    assert [(r.from_state, r.to_state, r.actor) for r in h.ti_history("a")][-2:] == [
        ("running", "restarting", "user"), ("restarting", "none", "worker")]
    with h.engine.connect() as conn:
        tries = ti_repo.history_of(conn, a.id)
    assert [(x.try_number, x.state) for x in tries] == [(1, "restarting")]
    h.loop()
    assert h.states() == {t: "success" for t in "abcd"}
    assert h.tis()["a"].try_number == 2
    check_history(h.history())


def test_a_restarting_task_whose_executor_is_gone_is_settled_by_the_scheduler(
        harness: Any) -> None:
    """airflow#55045: a cleared running task instance must never stay in restarting."""
    h = harness(_diamond())
    h.new_run()
    h.move("a", TI.SCHEDULED, TI.QUEUED, TI.RUNNING)
    clear_task_instances(h.engine, "r1", task_regexes=["^a$"], now=h.clock())
    with transaction(h.engine) as conn:  # too early: the executor may still be killing it
        assert settle_abandoned(conn, older_than=h.clock() - timedelta(seconds=60),
                                now=h.clock()) == 0
    h.clock.advance(timedelta(seconds=61))
    h.scheduler.reap(h.clock())
    assert h.tis()["a"].state == "none"
    assert [(r.from_state, r.to_state, r.actor) for r in h.ti_history("a")][-1] == (
        "restarting", "none", "scheduler")
    h.loop()
    assert h.run().state == "success"


def test_clearing_a_cancelled_run_queues_it_again(harness: Any) -> None:
    from statewright.services.controls import cancel_run

    h = harness(_diamond())
    h.new_run()
    cancel_run(h.engine, "r1", now=h.clock())
    assert h.run().state == "cancelled"
    clear_task_instances(h.engine, "r1", now=h.clock())
    assert h.run().state == "queued" and set(h.states().values()) == {"none"}
    h.loop()
    assert h.run().state == "success"
