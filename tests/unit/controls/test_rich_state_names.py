"""Prefect's rich state names over the state types: each one reached through the door."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from statewright.core.states import TI, StateName
from statewright.sdk import DAG, PythonOperator


def _names(h: Any, task_id: str) -> list[tuple[str, str]]:
    return [(r.to_state, r.name) for r in h.ti_history(task_id) if r.from_state != r.to_state]


def test_retrying_and_awaiting_retry(harness: Any) -> None:
    def flaky(ti: Any) -> None:
        if ti.try_number == 1:
            raise ConnectionError("first try fails")

    with DAG("names_retry") as dag:
        PythonOperator(task_id="t", python_callable=flaky, retries=1, retry_delay=0)
    h = harness(dag)
    h.new_run()
    h.loop()
    assert _names(h, "t")[-6:] == [
        ("running", "Running"), ("up_for_retry", "AwaitingRetry"), ("scheduled", "Scheduled"),
        ("queued", "Queued"), ("running", "Retrying"), ("success", "Success")]


def test_timed_out(harness: Any) -> None:
    with DAG("names_timeout") as dag:
        PythonOperator(task_id="t", python_callable=lambda: time.sleep(5),
                       execution_timeout=timedelta(seconds=0.2))
    h = harness(dag)
    h.new_run()
    h.loop()
    ti = h.tis()["t"]
    assert (ti.state, ti.state_name) == ("failed", "TimedOut")


def test_resuming_after_a_deferral(harness: Any) -> None:
    with DAG("names_resume") as dag:
        PythonOperator(task_id="t", python_callable=lambda: 1)
    h = harness(dag)
    h.new_run()
    h.defer("t")
    h.move("t", TI.SCHEDULED, TI.QUEUED)
    h.executor.queue_workloads([h.tis()["t"].id])
    running = [name for to, name in _names(h, "t") if to == "running"]
    assert running == ["Running", "Resuming"]


def test_every_name_the_controls_and_workers_use_is_allowed_for_its_type() -> None:
    from statewright.core.states import TI_NAMES_BY_TYPE

    assert StateName.CANCELLED in TI_NAMES_BY_TYPE[TI.FAILED]
    assert StateName.CANCELLED in TI_NAMES_BY_TYPE[TI.SKIPPED]
    assert StateName.CANCELLING in TI_NAMES_BY_TYPE[TI.SHUTDOWN]
    assert StateName.CACHED in TI_NAMES_BY_TYPE[TI.SUCCESS]
    assert {StateName.CRASHED, StateName.TIMED_OUT} <= TI_NAMES_BY_TYPE[TI.FAILED]
    assert StateName.RESUMING in TI_NAMES_BY_TYPE[TI.RUNNING]
