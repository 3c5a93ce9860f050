"""Flows in memory: transactions, hooks, pauses and bad input."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from statewright.flows import (
    Completed,
    MemoryBackend,
    MissingContextError,
    flow,
    get_run_logger,
    pause_flow_run,
    task,
    transaction,
    use_backend,
)
from statewright.flows.states import UnknownStateType


@pytest.fixture
def memory() -> Iterator[MemoryBackend]:
    backend = MemoryBackend()
    use_backend(lambda: backend)
    yield backend
    use_backend(None)


def test_a_transaction_rolls_back_completed_task_runs_when_a_task_inside_fails(
        memory: MemoryBackend) -> None:
    events: list[str] = []

    @task
    def write() -> str:
        return "written"

    @write.on_rollback
    def undo(txn: object) -> None:
        events.append("undo write")

    @write.on_commit
    def done(txn: object) -> None:
        events.append("commit write")

    @task
    def check() -> None:
        raise ValueError("bad data")

    @flow
    def pipeline() -> None:
        with transaction():
            write()
            check()

    with pytest.raises(ValueError, match="bad data"):
        pipeline()
    assert events == ["undo write"]
    names = [(kind, state, name) for kind, _pk, state, name in memory.history]
    assert ("task", "success", "RolledBack") in names


def test_a_transaction_commits_its_task_runs_hooks_at_exit(memory: MemoryBackend) -> None:
    events: list[str] = []

    @task(on_commit=[lambda txn: events.append("commit")])
    def write() -> int:
        events.append("write")
        return 1

    @flow
    def pipeline() -> None:
        with transaction():
            write()
            events.append("after write")

    pipeline()
    assert events == ["write", "after write", "commit"]


def test_a_transaction_entered_twice_is_refused(memory: MemoryBackend) -> None:
    txn = transaction()
    with txn, pytest.raises(RuntimeError, match="cannot be nested"), txn:
        pass


def test_a_hook_that_raises_is_logged_and_the_state_stands(
        memory: MemoryBackend, caplog: pytest.LogCaptureFixture) -> None:
    def bad_hook(flow: object, flow_run: object, state: object) -> None:
        raise RuntimeError("hook broke")

    @flow(on_completion=[bad_hook])
    def fine() -> int:
        return 3

    with caplog.at_level(logging.ERROR):
        assert fine() == 3
    assert "hook broke" in caplog.text
    assert memory.history[-1] == ("flow", 1, "success", "Completed")


def test_hooks_get_prefects_arguments(memory: MemoryBackend) -> None:
    seen: list[tuple[str, str, str]] = []

    @task(on_failure=[lambda t, tr, s: seen.append((t.name, tr.name, str(s.name)))])
    def boom() -> None:
        raise ValueError("x")

    @flow(on_failure=[lambda f, fr, s: seen.append((f.name, fr.flow_name, str(s.name)))])
    def outer() -> None:
        boom()

    with pytest.raises(ValueError):
        outer()
    assert seen == [("boom", "boom-0", "Failed"), ("outer", "outer", "Failed")]


def test_a_flow_returning_a_state_of_an_unknown_type_fails_with_a_clear_message(
        memory: MemoryBackend) -> None:
    class State:  # a look-alike, not ours
        type = "COMPLETED"

        def is_failed(self) -> bool:
            return False

        def result(self) -> None:
            return None

    @flow
    def odd() -> object:
        return State()

    state = odd(return_state=True)
    assert state.is_failed()
    assert isinstance(state.data, UnknownStateType)
    assert "state of a type this engine does not know" in str(state.message)


def test_a_task_called_outside_a_flow_runs_plainly_as_in_prefect() -> None:
    @task
    def add(x: int, y: int) -> int:
        return x + y

    assert add(1, 2) == 3
    assert add(1, 2, return_state=True).result() == 3


def test_submit_outside_a_flow_is_a_clear_error() -> None:
    @task
    def add(x: int, y: int) -> int:
        return x + y

    with pytest.raises(RuntimeError, match="outside a flow"):
        add.submit(1, 2)


def test_bad_arguments_are_refused_with_the_name_of_the_task(memory: MemoryBackend) -> None:
    with pytest.raises(ValueError, match="retry_delay_seconds"):
        task(retry_delay_seconds=-1)(lambda: None)
    with pytest.raises(ValueError, match="retries"):
        task(retries=-2)(lambda: None)

    @task
    def one(x: int) -> int:
        return x

    @flow
    def f() -> None:
        one(1, 2)  # type: ignore[call-arg]

    with pytest.raises(TypeError, match="'one'"):
        f()


def test_get_run_logger_outside_a_run_is_a_clear_error() -> None:
    with pytest.raises(MissingContextError, match="only inside a function decorated"):
        get_run_logger()


def test_pause_flow_run_waits_for_a_resume(memory: MemoryBackend) -> None:
    polls: list[float] = []

    def resume_on_poll(seconds: float) -> None:
        polls.append(seconds)
        memory.runs[1] = ("running", "Running")  # a person resumed it

    @flow
    def approval() -> str:
        pause_flow_run(timeout=60, poll_interval=5, sleep=resume_on_poll)
        return "approved"

    assert approval() == "approved"
    assert polls == [5]
    assert ("flow", 1, "paused", "Paused") in memory.history
    assert memory.history[-1] == ("flow", 1, "success", "Completed")


def test_log_prints_sends_print_to_the_run_logger(memory: MemoryBackend,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    @flow(log_prints=True)
    def chatty() -> object:
        print("hello", "there")
        return Completed()

    with caplog.at_level(logging.INFO, logger="statewright.flow_runs"):
        chatty()
    assert "hello there" in caplog.text


def test_a_task_on_the_process_runner_refuses_an_argument_that_cannot_be_sent(
        memory: MemoryBackend) -> None:
    import threading

    from statewright.flows import ProcessPoolTaskRunner, TaskArgumentNotSerializable

    @task
    def use(lock: object) -> None:
        return None

    @flow(task_runner=ProcessPoolTaskRunner(max_workers=1))
    def f() -> None:
        use(threading.Lock())

    with pytest.raises(TaskArgumentNotSerializable, match="argument 'lock' \\(lock\\)"):
        f()
    assert memory.history[-1] == ("flow", 1, "failed", "Failed")


def test_a_task_on_the_process_runner_runs_in_another_process(memory: MemoryBackend) -> None:
    import os

    from statewright.flows import ProcessPoolTaskRunner

    @task
    def pid(x: int) -> tuple[int, int]:
        return os.getpid(), x * 2

    @flow(task_runner=ProcessPoolTaskRunner(max_workers=1))
    def f() -> tuple[int, int]:
        return pid(21)

    other, value = f()
    assert value == 42 and other != os.getpid()


def test_submitted_task_runs_belong_to_the_transaction_around_them(
        memory: MemoryBackend) -> None:
    undone: list[int] = []

    @task(on_rollback=[lambda txn: undone.append(1)])
    def write(i: int) -> int:
        return i

    @task
    def fail() -> None:
        raise ValueError("no")

    @flow
    def pipeline() -> None:
        with transaction():
            futures = write.map([1, 2, 3])
            futures.wait()
            fail()

    with pytest.raises(ValueError):
        pipeline()
    assert undone == [1, 1, 1]


def test_suspend_flow_run_leaves_the_run_suspended_and_stops_the_flow(
        memory: MemoryBackend) -> None:
    from statewright.flows import FlowRunSuspended, suspend_flow_run

    after: list[str] = []

    @flow
    def waits() -> None:
        suspend_flow_run(key="approval")
        after.append("ran on")

    with pytest.raises(FlowRunSuspended):
        waits()
    assert after == []
    assert memory.history[-1] == ("flow", 1, "paused", "Suspended")


def test_pausing_from_a_task_or_for_an_input_of_no_type_is_refused(
        memory: MemoryBackend) -> None:
    @task
    def inner() -> None:
        pause_flow_run(timeout=1)

    @flow
    def asks() -> None:
        pause_flow_run(wait_for_input=object())

    @flow
    def from_task() -> None:
        inner()

    with pytest.raises(TypeError, match="pydantic model"):
        asks()
    with pytest.raises(MissingContextError, match="not outside one nor from a task"):
        from_task()


def test_pause_flow_run_returns_the_input_it_waited_for(memory: MemoryBackend) -> None:
    from pydantic import BaseModel

    class Approval(BaseModel):
        approved: bool
        reviewer: str = "nobody"

    def resume_with_input(_seconds: float) -> None:
        (pause,) = memory.wanted.values()
        assert pause.schema is not None and "approved" in pause.schema["properties"]
        memory.resume(pause.run_pk, {"approved": True, "reviewer": "ann"})

    @flow
    def approval() -> str:
        got = pause_flow_run(wait_for_input=Approval, poll_interval=1, sleep=resume_with_input)
        count = pause_flow_run(wait_for_input=int, poll_interval=1,
                               sleep=lambda _s: memory.resume(1, {"value": 3}))
        return f"{got.reviewer} {got.approved} {count}"

    assert approval() == "ann True 3"
