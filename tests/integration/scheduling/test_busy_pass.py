"""While every task process of the executor has its next try waiting, a pass woken by a try's
end is held until ``busy_pass_seconds`` after the previous pass began, so one pass queues the
tries that ended meanwhile; with a process free (a chain's next link) it is never held."""

from __future__ import annotations

import time
from typing import Any

import pytest

from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig


class _Executor:
    def __init__(self, backlog: int) -> None:
        self.waiting = backlog

    def slots_available(self) -> int:
        return 0

    def queue_workloads(self, ti_ids: Any) -> None:
        pass

    def backlog(self) -> int:
        return self.waiting


class _Stop:
    """A stop event that records how long the loop asked to wait (and does not wait)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def wait(self, timeout: float) -> bool:
        self.waits.append(timeout)
        return False


def _held(executor: Any, busy_pass_seconds: float, began_ago: float) -> list[float]:
    scheduler = Scheduler(None, executor,  # type: ignore[arg-type]
                          config=SchedulerConfig(busy_pass_seconds=busy_pass_seconds))
    scheduler._pass_began = time.monotonic() - began_ago
    stop = _Stop()
    scheduler._hold_while_busy(stop)  # type: ignore[arg-type]
    return stop.waits


def test_a_pass_waits_out_the_rest_while_every_process_has_a_try_waiting() -> None:
    [wait] = _held(_Executor(backlog=3), busy_pass_seconds=60.0, began_ago=0.0)
    assert 30.0 < wait <= 60.0


@pytest.mark.parametrize(("backlog", "seconds", "began_ago"), [
    (0, 60.0, 0.0),    # a process is free (a chain's next link): at once
    (-5, 60.0, 0.0),
    (3, 0.0, 0.0),     # switched off
    (3, 60.0, 120.0),  # the previous pass began long enough ago
])
def test_a_pass_is_not_held(backlog: int, seconds: float, began_ago: float) -> None:
    assert _held(_Executor(backlog), seconds, began_ago) == []


def test_an_executor_without_a_backlog_is_never_waited_for() -> None:
    class Plain:
        def slots_available(self) -> int:
            return 1

        def queue_workloads(self, ti_ids: Any) -> None:
            pass

    assert _held(Plain(), 60.0, 0.0) == []


def test_the_local_executors_backlog_is_what_it_holds_beyond_its_processes() -> None:
    ex = LocalExecutor(None, parallelism=2)  # type: ignore[arg-type]  # never started
    assert ex.backlog() == -2
    ex.queue_workloads([1, 2])
    assert ex.backlog() == 0
    ex.queue_workloads([3])
    assert ex.backlog() == 1
