"""The runner's timer heap: plain timer triggers held without an asyncio task each, fired once
each when their moment comes, cancelled, started again, stopped, thousands at a time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from statewright.sdk.triggers import DateTimeTrigger, TimeDeltaTrigger, TriggerEvent, temporal
from statewright.services.triggerer import timers
from statewright.services.triggerer.runner import FIRED, TriggerRunner
from statewright.services.triggerer.timers import TimerHeap, is_plain_timer

CLASSPATH = "statewright.sdk.triggers.temporal.DateTimeTrigger"


def _at(seconds: float) -> DateTimeTrigger:
    return DateTimeTrigger(datetime.now(UTC) + timedelta(seconds=seconds))


def _wait(cond: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline
        time.sleep(0.01)


@pytest.fixture
def runner() -> Any:
    r = TriggerRunner(lag_threshold=0.5)
    r.start()
    yield r
    r.stop()


class OwnRun(DateTimeTrigger):
    async def run(self) -> AsyncIterator[TriggerEvent]:
        yield TriggerEvent("own run")


class OwnCleanup(DateTimeTrigger):
    __slots__ = ("cleaned",)

    async def cleanup(self) -> None:
        self.cleaned = True


def test_only_plain_timers_go_to_the_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    assert is_plain_timer(_at(1)) and is_plain_timer(TimeDeltaTrigger(timedelta(seconds=1)))
    assert not is_plain_timer(OwnRun(datetime.now(UTC)))
    assert not is_plain_timer(OwnCleanup(datetime.now(UTC)))

    async def fake_sleep(seconds: float) -> None:
        return None

    monkeypatch.setattr(temporal, "_sleep", fake_sleep)  # a test drives the trigger's sleep
    assert not is_plain_timer(_at(1))


def test_each_due_trigger_fires_once_with_its_moment(runner: TriggerRunner) -> None:
    due = [(i, _at(-1 + i * 0.01)) for i in range(1, 4)]
    later = (10, _at(3600))
    serials = runner.add([(tid, trig, CLASSPATH) for tid, trig in [*due, later]])
    _wait(lambda: len(runner._outbox) >= 3)
    time.sleep(0.1)
    outcomes = runner.drain()
    assert sorted(o.trigger_id for o in outcomes) == [1, 2, 3]
    for o in outcomes:
        trig = dict(due)[o.trigger_id]
        assert o.kind == FIRED and o.serial == serials[o.trigger_id]
        assert o.event == TriggerEvent(trig.moment.isoformat())
    assert runner._tasks == {}  # no asyncio task for any of them
    assert runner.running_ids() == {10} and len(runner._timers) == 1


def test_a_trigger_fires_when_its_moment_comes(runner: TriggerRunner) -> None:
    trig = _at(1.0)
    runner.add([(1, trig, CLASSPATH)])
    time.sleep(0.1)
    assert runner.drain() == []
    _wait(runner.has_outcomes)
    assert datetime.now(UTC) >= trig.moment
    (o,) = runner.drain()
    assert o.event.payload == trig.moment.isoformat()


def test_cancelled_and_restarted_triggers(runner: TriggerRunner) -> None:
    gone, old, new = _at(1.0), _at(1.0), _at(1.1)
    runner.add([(1, gone, CLASSPATH), (2, old, CLASSPATH)])
    runner.cancel([1])
    serials = runner.add([(2, new, CLASSPATH)])  # started again: the first run is void
    _wait(runner.has_outcomes)
    time.sleep(0.3)
    (o,) = runner.drain()
    assert (o.trigger_id, o.serial, o.event.payload) == (2, serials[2], new.moment.isoformat())
    assert len(runner) == 0 and len(runner._timers) == 0


def test_stop_drops_the_held_timers() -> None:
    r = TriggerRunner()
    r.start()
    r.add([(i, _at(3600), CLASSPATH) for i in range(100)])
    _wait(lambda: len(r._timers) == 100)
    r.stop()
    assert len(r._timers) == 0 and r.drain() == []


def test_the_heap_reads_the_triggers_clock(runner: TriggerRunner,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    trig = _at(3600)
    monkeypatch.setattr(temporal, "_now", lambda: trig.moment + timedelta(seconds=1))
    runner.add([(1, trig, CLASSPATH)])
    _wait(runner.has_outcomes)
    assert runner.drain()[0].event.payload == trig.moment.isoformat()


def test_a_claim_of_thousands_fires_each_exactly_once(runner: TriggerRunner) -> None:
    n = 5000
    # Due 2 s on: the claim and the cancel must come first, even on a loaded machine (at 0.5 s
    # a slow claim let the triggers to cancel fire before the cancel reached them).
    triggers = [(i, _at(2.0 + (i % 7) * 0.05), CLASSPATH) for i in range(1, n + 1)]
    for start in range(0, n, 1000):
        runner.add(triggers[start:start + 1000])
    runner.cancel(range(1, 101))
    _wait(lambda: len(runner._outbox) >= n - 100)
    time.sleep(0.2)
    ids = [o.trigger_id for o in runner.drain()]
    assert sorted(ids) == list(range(101, n + 1))  # each once, the cancelled never
    assert runner._tasks == {} and len(runner) == 0


def test_fire_due_fires_a_batch_per_turn_and_compacts() -> None:
    loop = asyncio.new_event_loop()
    try:
        fired: list[int] = []
        heap = TimerHeap(loop, lambda trig, event: fired.append(trig.trigger_id))
        for i in range(timers.FIRE_BATCH + 10):
            trig = _at(-1)
            trig.trigger_id = i
            heap.add(i, trig)
        heap.rearm()
        heap._fire_due()
        assert len(fired) == timers.FIRE_BATCH
        loop.run_until_complete(asyncio.sleep(0.01))
        assert sorted(fired) == list(range(timers.FIRE_BATCH + 10))
        for i in range(3 * timers.FIRE_BATCH):
            trig = _at(3600)
            trig.trigger_id = i
            heap.add(i, trig)
        heap.discard(range(3 * timers.FIRE_BATCH - 5))
        assert len(heap) == 5 and len(heap._heap) < 3 * timers.FIRE_BATCH
        heap.clear()
    finally:
        loop.close()


def test_other_triggers_still_run_as_tasks(runner: TriggerRunner) -> None:
    own = OwnCleanup(datetime.now(UTC))
    runner.add([(1, own, "x.OwnCleanup"), (2, OwnRun(datetime.now(UTC)), "x.OwnRun")])
    _wait(lambda: len(runner._outbox) >= 2)
    outcomes = {o.trigger_id: o for o in runner.drain()}
    assert outcomes[2].event.payload == "own run" and own.cleaned
