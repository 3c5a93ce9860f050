"""How pause and cancel meet retries, deferrals and reschedules (docs/operating-runs.md)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.sdk import DAG, PythonOperator
from statewright.services.controls import (
    cancel_run,
    clear_task_instances,
    pause_run,
    resume_run,
)

RAN: list[str] = []


def _record(name: str) -> Any:
    def fn() -> str:
        RAN.append(name)
        return name
    return fn


class _Resumable(PythonOperator):
    def execute_complete(self, context: Any, **kwargs: Any) -> str:
        RAN.append(f"{self.task_id}-resumed")
        return "resumed"


def _three() -> DAG:
    with DAG("rules") as dag:
        for t in ("retry", "resched", "deferred"):
            _Resumable(task_id=t, python_callable=_record(t), retries=2)
    return dag


@pytest.fixture(autouse=True)
def _reset() -> None:
    RAN.clear()


def _waiting_run(h: Any) -> None:
    """A running run whose tasks wait: one for its retry, one for its reschedule, one on a
    trigger."""
    h.new_run()
    due = h.clock() + timedelta(seconds=10)
    h.move("retry", TI.SCHEDULED, TI.QUEUED, TI.RUNNING, TI.UP_FOR_RETRY, actor=Actor.WORKER,
           next_retry_at=due)
    h.move("resched", TI.SCHEDULED, TI.QUEUED, TI.RUNNING, TI.UP_FOR_RESCHEDULE,
           actor=Actor.WORKER, reschedule_date=due)
    h.defer("deferred")
    h.loop()
    assert h.run().state == "running"


def test_while_paused_no_retry_reschedule_or_resumed_deferral_starts(harness: Any) -> None:
    h = harness(_three())
    _waiting_run(h)
    pause_run(h.engine, "r1", now=h.clock())
    h.clock.advance(timedelta(minutes=1))  # every wait is over
    h.move("deferred", TI.SCHEDULED, actor=Actor.TRIGGERER)  # the trigger fires meanwhile
    h.loop()
    assert h.states() == {"retry": "up_for_retry", "resched": "up_for_reschedule",
                          "deferred": "scheduled"}
    assert RAN == [] and h.run().state == "paused"
    resume_run(h.engine, "r1", now=h.clock())
    h.loop()
    assert h.run().state == "success"
    assert sorted(RAN) == ["deferred-resumed", "resched", "retry"]


def test_cancel_ends_every_wait_as_cancelled(harness: Any) -> None:
    h = harness(_three())
    _waiting_run(h)
    pause_run(h.engine, "r1", now=h.clock())
    cancel_run(h.engine, "r1", now=h.clock())  # a paused run can be cancelled
    assert {t: (ti.state, ti.state_name) for t, ti in h.tis().items()} == {
        t: ("skipped", "Cancelled") for t in ("retry", "resched", "deferred")}
    assert h.run().state == "cancelled"
    h.clock.advance(timedelta(minutes=1))
    h.loop()
    assert RAN == [] and h.run().state == "cancelled"


def test_clearing_inside_a_paused_run_waits_for_resume(harness: Any) -> None:
    h = harness(_three())
    h.new_run()
    h.loop()
    assert h.run().state == "success" and len(RAN) == 3
    clear_task_instances(h.engine, "r1", task_regexes=["retry"], now=h.clock())
    pause_run(h.engine, "r1", now=h.clock())  # the run is queued again: pause it there
    h.loop()
    assert h.states()["retry"] == "none" and len(RAN) == 3
    resume_run(h.engine, "r1", now=h.clock())
    h.loop()
    assert h.run().state == "success" and RAN.count("retry") == 2
