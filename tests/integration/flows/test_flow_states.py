"""The state-semantics cases: final states and persisted histories as Prefect 3.9 writes them."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine
from tests.integration.flows.conftest import run_history, runs, task_history, task_rows

from statewright.flows import Completed, Failed, flow, task, wait
from statewright.services.flows.recorder import DbBackend

RUN_OK = [("queued", "Pending"), ("running", "Running"), ("success", "Completed")]
RUN_FAILED = [("queued", "Pending"), ("running", "Running"), ("failed", "Failed")]


def test_a_chain_of_task_calls_is_recorded_as_it_happens(engine: Engine,
                                                          recorded: DbBackend) -> None:
    @task
    def double(x: int) -> int:
        return 2 * x

    @flow
    def chain(n: int = 3) -> int:
        v = 1
        for _ in range(n):
            v = double(v)
        return v

    assert chain() == 8
    rows = task_rows(engine)
    assert sorted(rows) == ["double-0", "double-1", "double-2"]
    assert {r.state for r in rows.values()} == {"success"}
    assert task_history(engine, "double-1") == ["Pending", "Running", "Completed"]
    (run,) = runs(engine)
    assert (run.dag_id, run.state, run.state_name, run.run_type) == (
        "chain", "success", "Completed", "flow")
    assert run_history(engine) == RUN_OK


@pytest.mark.parametrize(("delay", "history"), [
    (0, ["Pending", "Running", "Retrying", "Retrying", "Completed"]),
    ([7, 9], ["Pending", "Running", "AwaitingRetry", "Retrying", "AwaitingRetry", "Retrying",
              "Completed"]),
])
def test_retries_with_and_without_a_delay(engine: Engine, recorded: DbBackend,
                                          monkeypatch: pytest.MonkeyPatch, delay: object,
                                          history: list[str]) -> None:
    """No delay: Running → Retrying at once. A delay: AwaitingRetry, then Retrying."""
    slept: list[float] = []
    # The flow engine's sleep only: replacing time.sleep made every other thread of the test
    # process that sleeps (the SQLite writer lock's watchdog) spin and fill ``slept``.
    monkeypatch.setattr("statewright.flows.flow_engine.sleep", slept.append)
    calls = []

    @task(retries=2, retry_delay_seconds=delay)
    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ValueError("not yet")
        return "ok"

    @flow
    def f() -> str:
        return flaky()

    assert f() == "ok"
    assert slept == ([] if delay == 0 else [7.0, 9.0])
    assert task_history(engine, "flaky-0") == history
    assert task_rows(engine)["flaky-0"].try_number == 3


def test_retries_exhausted_fail_the_task_and_the_flow(engine: Engine,
                                                      recorded: DbBackend) -> None:
    @task(retries=1)
    def boom() -> None:
        raise RuntimeError("boom")

    @flow
    def f() -> None:
        boom()

    with pytest.raises(RuntimeError, match="boom"):
        f()
    assert task_history(engine, "boom-0") == ["Pending", "Running", "Retrying", "Failed"]
    assert run_history(engine) == RUN_FAILED


def test_a_failed_task_the_flow_ignores_leaves_the_flow_completed(engine: Engine,
                                                                  recorded: DbBackend) -> None:
    @task
    def boom() -> None:
        raise RuntimeError("boom")

    @flow
    def f() -> str:
        future = boom.submit()
        wait([future])
        state = boom(return_state=True)
        assert state.is_failed()
        return "fine"

    assert f() == "fine"
    rows = task_rows(engine)
    assert rows["boom-0"].state == rows["boom-1"].state == "failed"
    assert run_history(engine) == RUN_OK


def test_a_failed_future_returned_fails_the_flow(engine: Engine, recorded: DbBackend) -> None:
    @task
    def boom() -> None:
        raise RuntimeError("boom")

    @flow
    def f() -> object:
        return boom.submit()

    state = f(return_state=True)
    assert state.is_failed()
    assert isinstance(state.data, RuntimeError)
    assert run_history(engine) == RUN_FAILED
    assert task_history(engine, "boom-0") == ["Pending", "Running", "Failed"]


def test_returned_states_decide_the_final_state(engine: Engine, recorded: DbBackend) -> None:
    @task
    def ok() -> int:
        return 1

    @task
    def fails_by_state() -> object:
        return Failed(message="decided to fail")

    @flow
    def returns_list() -> object:
        return [ok(return_state=True), fails_by_state(return_state=True)]

    @flow
    def returns_completed() -> object:
        fails_by_state(return_state=True)
        return Completed(message="all good anyway")

    assert returns_list(return_state=True).is_failed()
    assert returns_completed(return_state=True).is_completed()
    first, second = runs(engine)
    assert (first.state, second.state) == ("failed", "success")
    assert task_rows(engine)["fails_by_state-0"].state_name == "Failed"


def test_a_raising_flow_fails(engine: Engine, recorded: DbBackend) -> None:
    @flow
    def f() -> None:
        raise KeyError("missing")

    with pytest.raises(KeyError):
        f()
    (run,) = runs(engine)
    assert run.state == "failed"
    assert "KeyError" in run.state_message


def test_cache_miss_then_hit(engine: Engine, recorded: DbBackend) -> None:
    from statewright.flows.cache_policies import INPUTS

    calls = []

    @task(cache_policy=INPUTS)
    def slow(x: int) -> int:
        calls.append(x)
        return x * 10

    @flow
    def f() -> list[int]:
        return [slow(4), slow(4)]

    assert f() == [40, 40]
    assert calls == [4]
    assert task_history(engine, "slow-0") == ["Pending", "Running", "Completed"]
    assert task_history(engine, "slow-1") == ["Pending", "Running", "Cached"]


def test_a_subflow_is_a_child_run_with_a_task_run_in_the_parent(engine: Engine,
                                                                 recorded: DbBackend) -> None:
    from statewright.db.repositories import flows as flow_repo

    @flow
    def child(x: int) -> int:
        return x + 1

    @flow
    def parent() -> int:
        return child(1) + child(2)

    assert parent() == 5
    parent_run, *children = runs(engine)
    assert [r.dag_id for r in children] == ["child", "child"]
    assert task_history(engine, "child-0") == ["Pending", "Running", "Completed"]
    with engine.connect() as conn:
        kids = flow_repo.child_runs(conn, parent_run.id)
    assert [k.dag_run_id for k in kids] == [r.id for r in children]


def test_a_flow_run_whose_recorder_stopped_heartbeating_is_crashed_by_the_scheduler(
        engine: Engine, recorded: DbBackend) -> None:
    from datetime import UTC, datetime, timedelta

    from statewright.flows.backend import FlowRunStart, TaskRunStart
    from statewright.services.flows.reaper import reap_lost_flow_runs

    handle = recorded.start_flow_run(FlowRunStart("lost", None, {}))
    recorded.start_task_run(TaskRunStart(handle.run_pk, "work-0", "work-k", 0))
    now = datetime.now(UTC)
    assert reap_lost_flow_runs(engine, now, timedelta(seconds=60)) == 0  # fresh heartbeat
    assert reap_lost_flow_runs(engine, now + timedelta(seconds=61), timedelta(seconds=60)) == 1
    (run,) = runs(engine)
    assert (run.state, run.state_name) == ("failed", "Crashed")
    assert task_history(engine, "work-0") == ["Pending", "Running", "Crashed"]


def test_a_transaction_rolled_back_leaves_rolled_back_task_runs(engine: Engine,
                                                                recorded: DbBackend) -> None:
    from statewright.flows import transaction

    undone: list[str] = []

    @task(on_rollback=[lambda txn: undone.append("write")])
    def write() -> int:
        return 1

    @task
    def validate() -> None:
        raise ValueError("invalid")

    @flow
    def pipeline() -> None:
        with transaction():
            write()
            validate()

    with pytest.raises(ValueError):
        pipeline()
    assert undone == ["write"]
    assert task_history(engine, "write-0") == ["Pending", "Running", "Completed", "RolledBack"]
    assert task_rows(engine)["write-0"].state == "success"
    assert task_history(engine, "validate-0") == ["Pending", "Running", "Failed"]


def test_a_task_over_its_timeout_ends_timed_out(engine: Engine, recorded: DbBackend) -> None:
    import threading

    release = threading.Event()

    @task(timeout_seconds=0.2)
    def stuck() -> None:
        while not release.is_set():
            release.wait(0.01)

    @flow
    def f() -> None:
        stuck()

    with pytest.raises(TimeoutError, match="exceeded timeout"):
        f()
    assert task_history(engine, "stuck-0") == ["Pending", "Running", "TimedOut"]


def test_a_paused_flow_run_goes_on_when_a_person_resumes_it(engine: Engine,
                                                            recorded: DbBackend) -> None:
    from datetime import UTC, datetime

    from statewright.flows import pause_flow_run
    from statewright.services.controls import resume_run

    resumed: list[str] = []

    def resume_by_hand(_seconds: float) -> None:
        (run,) = runs(engine)
        assert (run.state, run.state_name) == ("paused", "Paused")
        resume_run(engine, run.run_id, dag_id="approval", now=datetime.now(UTC))
        resumed.append(run.run_id)

    @flow
    def approval() -> str:
        pause_flow_run(timeout=60, poll_interval=1, sleep=resume_by_hand)
        return "approved"

    assert approval() == "approved"
    assert len(resumed) == 1
    assert [s for s, _n in run_history(engine)] == [
        "queued", "running", "paused", "running", "success"]


def test_a_flow_returning_cancelled_ends_cancelled_and_calls_its_hook(
        engine: Engine, recorded: DbBackend) -> None:
    from statewright.flows import Cancelled

    called: list[str] = []

    @flow(on_cancellation=[lambda f, fr, s: called.append(str(s.name))])
    def stop_here() -> object:
        return Cancelled(message="nothing to do today")

    assert stop_here(return_state=True).is_cancelled()
    assert called == ["Cancelled"]
    assert run_history(engine)[-1] == ("cancelled", "Cancelled")


def test_flow_retries_run_the_function_again_named_retrying(engine: Engine,
                                                            recorded: DbBackend) -> None:
    attempts: list[int] = []

    @flow(retries=1)
    def twice() -> int:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("first time")
        return len(attempts)

    assert twice() == 2
    assert run_history(engine) == [("queued", "Pending"), ("running", "Running"),
                                   ("running", "Retrying"), ("success", "Completed")]


def test_a_hook_that_raises_is_noted_in_the_history_and_the_state_stands(
        engine: Engine, recorded: DbBackend) -> None:
    from sqlalchemy import select

    from statewright.db.tables import state_transition

    def broken(*_args: object) -> None:
        raise RuntimeError("pager is down")

    @task(on_completion=[broken])
    def step() -> int:
        return 1

    @flow(on_completion=[broken])
    def f() -> int:
        return step()

    assert f() == 1
    assert task_rows(engine)["step-0"].state_name == "Completed"
    assert run_history(engine)[-2:] == [("success", "Completed"), ("success", "Completed")]
    with engine.connect() as conn:
        notes = conn.execute(select(state_transition.c.entity, state_transition.c.message)
                             .where(state_transition.c.from_state
                                    == state_transition.c.to_state)).all()
    assert {e for e, _m in notes} == {"task_instance", "dag_run"}
    assert all("pager is down" in m and "stands" in m for _e, m in notes)
