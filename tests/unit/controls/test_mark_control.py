"""Mark task instances and runs success or failed (Airflow's mark_tasks), through the door."""

from __future__ import annotations

from typing import Any

import pytest

from statewright.core.states import RUN, TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import dag_callbacks as outbox
from statewright.db.repositories import task_instances as ti_repo
from statewright.sdk import DAG, PythonOperator
from statewright.services.controls import ControlError, mark_run, mark_task_instances


def _ok() -> str:
    return "ok"


def _boom() -> None:
    raise ValueError("boom")


def _notify(context: Any) -> None:
    return None


def _diamond(fail_b: bool = False) -> DAG:
    with DAG("mark_diamond", on_success_callback=_notify, on_failure_callback=_notify) as dag:
        a, c, d = (PythonOperator(task_id=t, python_callable=_ok) for t in "acd")
        b = PythonOperator(task_id="b", python_callable=_boom if fail_b else _ok)
        a >> [b, c] >> d
    return dag


def test_mark_success_with_downstream_makes_a_failed_run_follow_its_leaves(
        harness: Any, check_history: Any, edges_of: Any) -> None:
    h = harness(_diamond(fail_b=True))
    h.new_run()
    h.loop()
    assert h.run().state == "failed"
    plan = mark_task_instances(h.engine, "r1", "b", TI.SUCCESS, downstream=True, now=h.clock())
    assert [(c.task_id, c.frm.value, c.to.value) for c in plan.changes] == [
        ("b", "failed", "success"), ("d", "upstream_failed", "success")]
    assert h.states() == {t: "success" for t in "abcd"}
    assert h.run().state == "success"
    rows = h.history()
    check_history(rows)
    assert edges_of(rows, "b")[-1] == ("failed", "success", "Success", "user")
    assert [(r.from_state, r.to_state, r.actor) for r in rows if r.entity == "dag_run"][-1] == (
        "failed", "success", "user")
    with h.engine.connect() as conn:  # the DAG's success callback is queued, as for any end
        kinds = [c.kind for c in outbox.for_run(conn, h.run().id)]
    assert kinds == ["on_failure_callback", "on_success_callback"]


def test_mark_failed_kills_a_running_try_and_keeps_it_failed(harness: Any,
                                                             check_history: Any) -> None:
    h = harness(_diamond())
    h.new_run()
    h.move("a", TI.SCHEDULED, TI.QUEUED, TI.RUNNING)
    plan = mark_task_instances(h.engine, "r1", "a", TI.FAILED, now=h.clock())
    assert [c.task_id for c in plan.kills] == ["a"]
    a = h.tis()["a"]
    assert (a.state, a.state_message) == ("failed", "marked failed by a user")
    with h.engine.connect() as conn:  # the try's history row records the person's decision
        tries = ti_repo.history_of(conn, a.id)
    assert [(x.try_number, x.state) for x in tries] == [(1, "failed")]
    h.loop()  # the run follows: a failed leaf's upstream
    assert h.states() == {"a": "failed", "b": "upstream_failed", "c": "upstream_failed",
                          "d": "upstream_failed"}
    check_history(h.history())


def test_mark_run_failed_fails_running_work_and_skips_the_rest(harness: Any,
                                                                check_history: Any) -> None:
    h = harness(_diamond())
    h.new_run()
    h.move("a", TI.SCHEDULED, TI.QUEUED, TI.RUNNING, TI.SUCCESS, actor=Actor.WORKER)
    h.move("b", TI.SCHEDULED, TI.QUEUED, TI.RUNNING)
    trigger_id = h.defer("c")
    run_pk = h.run().id
    with transaction(h.engine) as conn:
        door.set_dag_run_state(conn, run_pk, frm=RUN.QUEUED, to=RUN.RUNNING,
                               actor=Actor.SCHEDULER, now=h.clock())
    plan = mark_run(h.engine, "r1", RUN.FAILED, now=h.clock())
    assert {c.task_id: c.to.value for c in plan.changes} == {
        "b": "failed", "c": "failed", "d": "skipped"}
    assert h.states() == {"a": "success", "b": "failed", "c": "failed", "d": "skipped"}
    assert h.run().state == "failed" and not h.trigger_exists(trigger_id)
    check_history(h.history())


def test_mark_run_success_turns_unfinished_and_failed_work_green(harness: Any) -> None:
    h = harness(_diamond(fail_b=True))
    h.new_run()
    h.loop()
    plan = mark_run(h.engine, "r1", RUN.SUCCESS, now=h.clock())
    assert sorted(c.task_id for c in plan.changes) == ["b", "d"]
    assert h.states() == {t: "success" for t in "abcd"} and h.run().state == "success"


def test_marking_a_run_already_in_that_state_changes_nothing(harness: Any) -> None:
    h = harness(_diamond())
    h.new_run()
    h.loop()
    assert h.run().state == "success"
    count = h.history_count()
    plan = mark_run(h.engine, "r1", RUN.SUCCESS, now=h.clock())
    assert plan.empty and plan.notice == "nothing changed: the run is success already"
    plan = mark_task_instances(h.engine, "r1", "a", TI.SUCCESS, now=h.clock())
    assert plan.empty and "success already" in (plan.notice or "")
    assert h.history_count() == count


def test_marking_an_unknown_task_is_a_clear_error(harness: Any) -> None:
    h = harness(_diamond())
    h.new_run()
    with pytest.raises(ControlError, match="has no task 'zz'; its tasks are: a, b, c, d"):
        mark_task_instances(h.engine, "r1", "zz", TI.SUCCESS, now=h.clock())
    with pytest.raises(ControlError, match="success or failed"):
        mark_run(h.engine, "r1", RUN.PAUSED, now=h.clock())


def test_dry_run_mark_changes_nothing(harness: Any) -> None:
    h = harness(_diamond())
    h.new_run()
    count = h.history_count()
    plan = mark_run(h.engine, "r1", RUN.FAILED, dry_run=True, now=h.clock())
    assert len(plan.changes) == 4 and plan.run_change is not None
    assert h.history_count() == count and h.run().state == "queued"
