"""Retry policies in runs: a task's policy decides, from its exception, whether and when a
failed try is retried (through the worker, the one door and ``dag.test()``'s scheduler)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.sdk import (
    DAG,
    ExceptionRetryPolicy,
    RetryAction,
    RetryDecision,
    RetryPolicy,
    RetryRule,
    task,
)

START = datetime(2026, 1, 5, 12, tzinfo=UTC)


class FakeTime:
    """dag.test()'s clock and sleep: waiting for a retry moves the clock, and nothing else."""

    def __init__(self) -> None:
        self.now = START
        self.slept: list[float] = []

    def clock(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += timedelta(seconds=seconds)


class Flaky(Exception):
    pass


def _failing_dag(dag_id: str, raises: Callable[[int], BaseException], **task_args: Any) -> DAG:
    with DAG(dag_id, schedule=None, start_date=START) as dag:

        @task(**task_args)
        def call(ti: Any = None) -> str:
            error = raises(ti.try_number)
            if error is not None:
                raise error
            return "ok"

        call()
    return dag


def _waits(fake: FakeTime) -> list[int]:
    """Seconds waited between tries (rounded: the scheduler adds a millisecond)."""
    return [round(s) for s in fake.slept if s >= 1]


def test_a_matching_retry_rule_retries_after_its_own_delay(engine: Engine) -> None:
    policy = ExceptionRetryPolicy(rules=[
        RetryRule(exception=Flaky, retry_delay=timedelta(seconds=30), reason="flaky backend")])
    dag = _failing_dag("rp_retry", lambda n: Flaky("down") if n < 3 else None,
                       retries=5, retry_delay=timedelta(minutes=10), retry_policy=policy)
    fake = FakeTime()
    run = dag.test(engine=engine, clock=fake.clock, sleep=fake.sleep)
    assert run.state.value == "success"
    assert run.ti("call").try_number == 3
    assert _waits(fake) == [30, 30]  # the rule's delay, not the task's ten minutes
    retried = [h for h in run.history if h["to_state"] == "up_for_retry"]
    assert [h["message"] for h in retried] == ["Flaky: down (retry policy: flaky backend)"] * 2


def test_a_fail_rule_fails_at_once_whatever_retries_are_left(engine: Engine) -> None:
    policy = ExceptionRetryPolicy(rules=[
        RetryRule(exception="builtins.PermissionError", action=RetryAction.FAIL,
                  reason="Auth failure, not retryable")])
    dag = _failing_dag("rp_fail", lambda n: PermissionError("denied"),
                       retries=5, retry_policy=policy)
    fake = FakeTime()
    run = dag.test(engine=engine, clock=fake.clock, sleep=fake.sleep)
    assert run.state.value == "failed"
    ti = run.ti("call")
    assert (ti.state.value, ti.try_number) == ("failed", 1)
    assert ti.state_message == "PermissionError: denied (retry policy: Auth failure, not retryable)"
    assert _waits(fake) == []


def test_retry_cannot_go_past_the_tasks_retries(engine: Engine) -> None:
    policy = ExceptionRetryPolicy(rules=[RetryRule(exception=Flaky, retry_delay=timedelta(0))])
    dag = _failing_dag("rp_cap", lambda n: Flaky(f"try {n}"), retries=2, retry_policy=policy)
    fake = FakeTime()
    run = dag.test(engine=engine, clock=fake.clock, sleep=fake.sleep)
    ti = run.ti("call")
    assert (run.state.value, ti.state.value, ti.try_number) == ("failed", "failed", 3)
    assert ti.state_message == "Flaky: try 3 (retry policy: Matched rule for Flaky)"


def test_no_matching_rule_and_a_raising_policy_fall_back_to_the_tasks_retries(
        engine: Engine) -> None:
    class Broken(RetryPolicy):
        def evaluate(self, exception: BaseException, try_number: int, max_tries: int,
                     context: Any = None) -> RetryDecision:
            raise RuntimeError("policy bug")

    unmatched = ExceptionRetryPolicy(rules=[RetryRule(exception=KeyError)])
    for dag_id, policy in (("rp_unmatched", unmatched), ("rp_broken", Broken())):
        dag = _failing_dag(dag_id, lambda n: Flaky("x") if n < 2 else None,
                           retries=1, retry_delay=timedelta(seconds=45), retry_policy=policy)
        fake = FakeTime()
        run = dag.test(engine=engine, clock=fake.clock, sleep=fake.sleep)
        assert (run.state.value, run.ti("call").try_number) == ("success", 2), dag_id
        assert _waits(fake) == [45], dag_id


def test_a_custom_policy_sees_the_try_and_its_failure_callback_runs(engine: Engine) -> None:
    seen: list[tuple[str, int, int]] = []
    called: list[str] = []

    class SecondTimeFails(RetryPolicy):
        def evaluate(self, exception: BaseException, try_number: int, max_tries: int,
                     context: Any = None) -> RetryDecision:
            seen.append((type(exception).__name__, try_number, max_tries))
            if try_number >= 2:
                return RetryDecision.fail("enough")
            return RetryDecision.retry(timedelta(seconds=5))

    dag = _failing_dag("rp_custom", lambda n: Flaky("x"), retries=4,
                       retry_policy=SecondTimeFails(),
                       on_retry_callback=lambda ctx: called.append("retry"),
                       on_failure_callback=lambda ctx: called.append("failure"))
    fake = FakeTime()
    run = dag.test(engine=engine, clock=fake.clock, sleep=fake.sleep)
    assert (run.state.value, run.ti("call").try_number) == ("failed", 2)
    assert seen == [("Flaky", 1, 4), ("Flaky", 2, 4)]
    assert called == ["retry", "failure"]
    assert _waits(fake) == [5]


def test_retry_policy_must_be_a_policy() -> None:
    from statewright.core.errors import DagDefinitionError

    with pytest.raises(DagDefinitionError, match="retry_policy must be a RetryPolicy"):
        _failing_dag("rp_bad", lambda n: None, retry_policy={"rules": []})


def test_a_timed_out_try_is_judged_by_the_policy_too(engine: Engine) -> None:
    import threading

    from statewright.sdk.exceptions import TaskTimeout

    policy = ExceptionRetryPolicy(rules=[
        RetryRule(exception=TaskTimeout, action=RetryAction.FAIL, reason="too slow")])
    with DAG("rp_timeout", schedule=None, start_date=START) as dag:

        @task(retries=3, execution_timeout=timedelta(milliseconds=200), retry_policy=policy)
        def slow() -> None:
            threading.Event().wait(5)  # interrupted by the timeout

        slow()
    fake = FakeTime()
    run = dag.test(engine=engine, clock=fake.clock, sleep=fake.sleep)
    ti = run.ti("slow")
    assert (run.state.value, ti.state.value, ti.try_number) == ("failed", "failed", 1)
    assert ti.state_message is not None and ti.state_message.endswith("(retry policy: too slow)")
