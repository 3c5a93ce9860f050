"""A busy scheduler loop runs its extra steps (run creation, Late names, deadlines, …) at most
every ``steps_every`` seconds, and again at once while they find work; ``run_once`` runs them
every time."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import pytest
from sqlalchemy import Engine

from statewright.services.scheduler import scheduler as scheduler_module
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig


class _NoExecutor:
    identity = "none"

    def slots_available(self) -> int:
        return 0

    def queue_workloads(self, ti_ids: Sequence[int]) -> None:
        raise AssertionError("nothing is queued here")


class _Step:
    def __init__(self) -> None:
        self.calls = 0
        self.work: list[int] = []

    def __call__(self, _scheduler: Scheduler, _now: datetime) -> int:
        self.calls += 1
        return self.work.pop(0) if self.work else 0


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1000.0]
    monkeypatch.setattr(scheduler_module.time, "monotonic", lambda: now[0])
    return now


def test_steps_run_every_so_often_while_busy(sqlite_engine: Engine,
                                             clock: list[float]) -> None:
    step = _Step()
    s = Scheduler(sqlite_engine, _NoExecutor(), extra_steps=[step],
                  config=SchedulerConfig(steps_every=0.5))
    s._pass()
    assert step.calls == 1
    s._pass()
    clock[0] += 0.4
    s._pass()
    assert step.calls == 1  # passes back to back: the steps wait
    clock[0] += 0.1
    s._pass()
    assert step.calls == 2


def test_a_step_that_found_work_runs_again_on_the_next_pass(sqlite_engine: Engine,
                                                           clock: list[float]) -> None:
    step = _Step()
    step.work = [3, 2]  # e.g. more due runs than one pass creates
    s = Scheduler(sqlite_engine, _NoExecutor(), extra_steps=[step],
                  config=SchedulerConfig(steps_every=0.5))
    assert s._pass().did_work
    assert s._pass().did_work
    s._pass()
    assert step.calls == 3
    s._pass()
    assert step.calls == 3  # nothing found last time: wait again


def test_run_once_runs_the_steps_every_time(sqlite_engine: Engine, clock: list[float]) -> None:
    step = _Step()
    s = Scheduler(sqlite_engine, _NoExecutor(), extra_steps=[step])
    for _ in range(3):
        s.run_once()
    assert step.calls == 3
