"""The scheduler asks its extra steps whether they are due in the pass's one read transaction,
all in one statement, and calls only those that are: an idle pass opens no transaction per step.
A step that did work is followed by a fresh probe, so the run it created starts in the same
pass."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, event, false, literal, select
from tests.noop import NoopOperator

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.tables import UTCDateTime, dag
from statewright.sdk import DAG
from statewright.services.dag_runs import trigger_dag
from statewright.services.scheduler.scheduler import Scheduler

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


class _Step:
    def __init__(self, due: Any = None, work: Callable[[Scheduler], int] | None = None) -> None:
        self.calls = 0
        self._work = work
        if due is not None:
            self.due = lambda _now: due

    def __call__(self, scheduler: Scheduler, _now: datetime) -> int:
        self.calls += 1
        return self._work(scheduler) if self._work else 0


def _recording(call: Any, called: list[str]) -> Any:
    def wrapped(self: Any, scheduler: Scheduler, now: datetime) -> int:
        called.append(type(self).__name__)
        return int(call(self, scheduler, now))

    return wrapped


@pytest.fixture
def statements(engine: Engine) -> Iterator[list[str]]:
    seen: list[str] = []

    def _count(_conn: Any, _cursor: Any, stmt: str, *_args: Any) -> None:
        seen.append(stmt)

    event.listen(engine, "before_cursor_execute", _count)
    yield seen
    event.remove(engine, "before_cursor_execute", _count)


@pytest.fixture
def begun(engine: Engine) -> Iterator[list[int]]:
    count = [0]

    def _begin(_conn: Any) -> None:
        count[0] += 1

    event.listen(engine, "begin", _begin)
    yield count
    event.remove(engine, "begin", _begin)


def test_only_due_steps_are_called_asked_in_one_statement(
        harness: Callable, statements: list[str]) -> None:
    h = harness(NOW)
    always = _Step()
    never = _Step(due=False)
    yes = _Step(due=True)
    rows = _Step(due=select(literal(1)))
    no_rows = _Step(due=select(dag.c.dag_id).where(false()))
    condition = _Step(due=select(literal(1)).exists())
    steps = [always, never, yes, rows, no_rows, condition]
    h.scheduler.extra_steps = steps
    h.scheduler.run_once()
    assert [s.calls for s in steps] == [1, 0, 1, 1, 0, 1]
    asked = [s for s in statements if "EXISTS" in s.upper()]
    # one statement for the three and for the queued runs to start
    assert len(asked) == 1 and asked[0].upper().count("EXISTS") == 4


def test_an_idle_pass_opens_no_transaction_per_step(harness: Callable, begun: list[int],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    h = harness(NOW)  # the scheduling steps: run creation, Late names, deadlines, flows, …
    h.scheduler.run_once()  # the first pass also reaps (housekeeping)
    called: list[str] = []
    for step in h.scheduler.extra_steps:
        monkeypatch.setattr(type(step), "__call__", _recording(type(step).__call__, called))
    steps, h.scheduler.extra_steps = h.scheduler.extra_steps, []
    begun[0] = 0
    assert not h.scheduler.run_once().did_work
    without_steps, begun[0] = begun[0], 0
    h.scheduler.extra_steps = steps
    assert not h.scheduler.run_once().did_work
    assert called == []
    assert begun[0] == without_steps  # the steps' probes ride on the pass's snapshot


def test_a_run_a_step_created_starts_in_the_same_pass(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    with DAG("made") as d:
        NoopOperator(task_id="a")
    h.sync(d)

    def create(_scheduler: Scheduler) -> int:
        with transaction(engine) as conn:
            trigger_dag(conn, "made", now=NOW, actor=Actor.USER, run_id="by_step")
        return 1

    h.scheduler.extra_steps = [_Step(due=True, work=create)]
    stats = h.scheduler.run_once()
    assert stats.steps_worked == 1 and stats.started_runs == 1


class _ClockStep(_Step):
    """Due once the clock passes ``at``; ``due_moves_with_now``: its query is built once."""

    due_moves_with_now = True

    def __init__(self, at: datetime, *, shape_moves: bool = False) -> None:
        super().__init__()
        self.at, self.shape_moves, self.built = at, shape_moves, 0

    def due(self, now: datetime) -> Any:
        self.built += 1
        query = select(literal(1)).where(literal(self.at, UTCDateTime()) <= literal(
            now - timedelta(minutes=5), UTCDateTime()))
        # a query whose shape changes with the clock cannot be built once
        return query.where(literal(now.day) > 0) if self.shape_moves and now.day % 2 else query


@pytest.mark.parametrize("shape_moves", [False, True])
def test_a_step_due_at_a_time_is_asked_with_each_pass_clock(
        harness: Callable, shape_moves: bool) -> None:
    h = harness(NOW)
    step = _ClockStep(NOW + timedelta(hours=1), shape_moves=shape_moves)
    h.scheduler.extra_steps = [step]
    h.scheduler.run_once()
    h.clock.advance(timedelta(minutes=64))  # 1 minute short of its threshold
    h.scheduler.run_once()
    assert step.calls == 0
    h.clock.advance(timedelta(minutes=2))
    h.scheduler.run_once()
    h.scheduler.run_once()
    assert step.calls == 2
    # built at two clocks once, then only bound to each pass's; asked every pass otherwise
    assert step.built == (2 + 4 if shape_moves else 2)
