"""Task callbacks, state hooks and DAG-level callbacks: each fires once, with its context; a hook
that raises is recorded and changes nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import dag_callbacks as outbox
from statewright.sdk import DAG, PythonOperator, SkipTask, task
from statewright.services.controls import mark_task_instances
from statewright.services.worker.dag_callbacks import run_pending_in_process
from statewright.services.worker.outcome import TryResult, apply_results

SEEN: list[tuple[str, dict[str, Any]]] = []


def _hook(label: str) -> Any:
    def fn(context: Any) -> None:
        SEEN.append((label, {
            "task_id": context["ti"].task_id if "ti" in context else None,
            "try_number": context["ti"].try_number if "ti" in context else None,
            "state": context.get("state"), "state_name": context.get("state_name"),
            "previous_state": context.get("previous_state"),
            "previous_state_name": context.get("previous_state_name"),
            "exception": type(context.get("exception")).__name__
            if context.get("exception") else None,
            "run_id": context.get("run_id"), "reason": context.get("reason"),
        }))
    fn.__qualname__ = label
    return fn


def _raises(context: Any) -> None:
    raise RuntimeError("the hook is broken")


@pytest.fixture(autouse=True)
def _reset() -> None:
    SEEN.clear()


def _labels() -> list[str]:
    return [label for label, _ in SEEN]


def test_task_callbacks_fire_once_each_with_their_context(harness: Any) -> None:
    def flaky(ti: Any) -> str:
        if ti.try_number == 1:
            raise ConnectionError("first try fails")
        return "ok"

    def always_fails() -> None:
        raise ValueError("no")

    def skips() -> None:
        raise SkipTask("not today")

    callbacks = {f"on_{k}_callback": _hook(k) for k in
                 ("execute", "success", "failure", "retry", "skipped")}
    with DAG("callbacks") as dag:
        PythonOperator(task_id="flaky", python_callable=flaky, retries=1, retry_delay=0,
                       **callbacks)
        PythonOperator(task_id="fails", python_callable=always_fails, **callbacks)
        PythonOperator(task_id="skips", python_callable=skips, **callbacks)
    h = harness(dag)
    h.new_run()
    h.loop()
    by_task: dict[str, list[tuple[str, Any, Any, Any]]] = {}
    for label, ctx in SEEN:
        by_task.setdefault(ctx["task_id"], []).append(
            (label, ctx["try_number"], ctx["state"], ctx["exception"]))
    assert by_task == {
        "flaky": [("execute", 1, "running", None),
                  ("retry", 1, "up_for_retry", "ConnectionError"),
                  ("execute", 2, "running", None), ("success", 2, "success", None)],
        "fails": [("execute", 1, "running", None), ("failure", 1, "failed", "ValueError")],
        "skips": [("execute", 1, "running", None), ("skipped", 1, "skipped", None)],
    }
    retry = next(ctx for label, ctx in SEEN if label == "retry")
    assert (retry["previous_state"], retry["previous_state_name"], retry["state_name"],
            retry["run_id"]) == ("running", "Running", "AwaitingRetry", "r1")
    second = [ctx for label, ctx in SEEN if label == "execute" and ctx["try_number"] == 2]
    assert second[0]["state_name"] == "Retrying"


def test_state_hooks_by_type_by_name_and_on_every_change(harness: Any) -> None:
    @task(retries=1, retry_delay=0,
          on_state={"up_for_retry": _hook("type:up_for_retry"), "Retrying": _hook("name:Retrying"),
                    "success": [_hook("type:success")]},
          on_state_change=[_hook("any")])
    def flaky(ti: Any) -> str:
        if ti.try_number == 1:
            raise ConnectionError("first try fails")
        return "ok"

    with DAG("state_hooks") as dag:
        flaky()
    h = harness(dag)
    h.new_run()
    h.loop()
    assert [(label, ctx["state"], ctx["state_name"]) for label, ctx in SEEN] == [
        ("any", "running", "Running"),
        ("type:up_for_retry", "up_for_retry", "AwaitingRetry"),
        ("any", "up_for_retry", "AwaitingRetry"),
        ("name:Retrying", "running", "Retrying"),
        ("any", "running", "Retrying"),
        ("type:success", "success", "Success"),
        ("any", "success", "Success"),
    ]


def test_an_unknown_state_in_on_state_is_refused_when_the_dag_is_defined() -> None:
    with pytest.raises(DagDefinitionError, match="'finished' is neither a state type"), \
            DAG("bad_hooks"):
        PythonOperator(task_id="t", python_callable=lambda: None,
                       on_state={"finished": _hook("x")})


def test_a_hook_that_raises_is_recorded_and_changes_nothing(harness: Any,
                                                            check_history: Any) -> None:
    with DAG("raising_hook") as dag:
        PythonOperator(task_id="t", python_callable=lambda: 42, on_success_callback=_raises,
                       on_state={"running": _raises})
    h = harness(dag)
    h.new_run()
    h.loop()
    ti = h.tis()["t"]
    assert (ti.state, h.run().state) == ("success", "success")
    notes = [(r.from_state, r.to_state, r.actor, r.message) for r in h.ti_history("t")
             if r.from_state == r.to_state]
    assert [(f, t, a) for f, t, a, _ in notes] == [("success", "success", "worker")] * 2
    assert "state hook (Running) _raises raised RuntimeError: the hook is broken" in notes[0][3]
    assert "on_success_callback _raises raised RuntimeError" in notes[1][3]
    assert all("outcome is unchanged" in n[3] for n in notes)
    check_history(h.history())


def test_end_hooks_do_not_fire_for_a_try_that_no_longer_runs(harness: Any) -> None:
    """A person marked the task failed while it ran: its failure/success hooks do not fire,
    and the history says why."""
    def marks_itself(ti: Any) -> str:
        mark_task_instances(HOLDER[0].engine, "r1", "t", TI.FAILED, now=HOLDER[0].clock())
        return "too late"

    with DAG("lost_race") as dag:
        PythonOperator(task_id="t", python_callable=marks_itself,
                       on_success_callback=_hook("success"), on_failure_callback=_hook("failure"))
    h = harness(dag)
    HOLDER[:] = [h]
    h.new_run()
    h.loop()
    assert h.tis()["t"].state == "failed" and SEEN == []
    notes = [r.message for r in h.ti_history("t") if r.from_state == r.to_state]
    assert notes == ["hooks of success not run: the try no longer runs (it is failed, named "
                     "Failed)"]


HOLDER: list[Any] = []


def test_hooks_that_ran_for_another_state_than_the_applied_one_are_recorded(
        harness: Any) -> None:
    with DAG("mismatch") as dag:
        PythonOperator(task_id="t", python_callable=lambda: None)
    h = harness(dag)
    h.new_run()
    h.move("t", TI.SCHEDULED, TI.QUEUED, TI.RUNNING)
    h.move("t", TI.FAILED, actor=Actor.USER)  # the worker's report loses the race
    ti = h.tis()["t"]
    result = TryResult(ti_id=ti.id, try_number=1, dag_id="mismatch", run_id="r1", task_id="t",
                       dag_run_id=ti.dag_run_id, kind="success",
                       extra={"hooks_ran_for": ["success", "Success"]})
    with transaction(h.engine) as conn:
        assert apply_results(conn, [result], now=h.clock(), views=h.executor.views) == {}
    note = h.ti_history("t")[-1]
    assert (note.actor, note.message) == (
        "worker", "try 1 ran its success (Success) hooks, but the try lost the race (its state "
        "had changed)")


def test_dag_callbacks_run_once_when_the_run_ends(harness: Any) -> None:
    with DAG("dag_callbacks", on_success_callback=_hook("dag-success"),
             on_failure_callback=[_hook("dag-failure"), _raises]) as dag:
        PythonOperator(task_id="t", python_callable=lambda: (_ for _ in ()).throw(
            ValueError("x")))
    h = harness(dag)
    h.new_run()
    h.loop()
    assert h.run().state == "failed"
    assert run_pending_in_process(h.engine, {"dag_callbacks": dag}, clock=h.clock) == 1
    assert run_pending_in_process(h.engine, {"dag_callbacks": dag}, clock=h.clock) == 0
    assert [(label, ctx["run_id"], ctx["state"]) for label, ctx in SEEN] == [
        ("dag-failure", "r1", "failed")]
    with h.engine.connect() as conn:
        rows = outbox.for_run(conn, h.run().id)
    assert [(r.kind, r.status, r.attempts) for r in rows] == [("on_failure_callback", "failed", 1)]
    assert "_raises raised RuntimeError" in (rows[0].error or "")
    note = [r for r in h.history() if r.entity == "dag_run"][-1]
    assert (note.from_state, note.to_state, note.actor) == ("failed", "failed", "worker")
    assert h.run().state == "failed"


def test_dag_test_runs_the_dag_success_callback(engine: Any) -> None:
    with DAG("dag_test_callbacks", on_success_callback=_hook("dag-success")) as dag:
        PythonOperator(task_id="t", python_callable=lambda: 1)
    result = dag.test(engine=engine)
    assert result.state.value == "success"
    assert [(label, ctx["run_id"]) for label, ctx in SEEN] == [("dag-success", result.run_id)]


def test_a_cancelled_run_queues_no_dag_callback(harness: Any) -> None:
    from statewright.services.controls import cancel_run

    with DAG("cancel_no_cb", on_failure_callback=_hook("dag-failure")) as dag:
        PythonOperator(task_id="t", python_callable=lambda: 1)
    h = harness(dag)
    h.new_run()
    cancel_run(h.engine, "r1", now=h.clock())
    h.clock.advance(timedelta(minutes=1))
    h.loop()
    assert run_pending_in_process(h.engine, {"cancel_no_cb": dag}, clock=h.clock) == 0
    assert SEEN == []
