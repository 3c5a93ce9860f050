"""The triggerer's event loop on its own: first events, failures, cancellation, the watchdog,
and the shared metrics module."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from statewright.observability import metrics
from statewright.sdk.triggers import BaseTrigger, TriggerEvent
from statewright.services.triggerer.runner import FAILED, FIRED, TriggerRunner, run_to_first_event


class Scripted(BaseTrigger):
    def __init__(self, mode: str, delay: float = 0.0) -> None:
        super().__init__()
        self.mode, self.delay, self.cleaned = mode, delay, False

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return "x.Scripted", {"mode": self.mode}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        await asyncio.sleep(self.delay)
        if self.mode == "raise":
            raise ConnectionError("gone")
        if self.mode == "block":
            time.sleep(0.5)
        if self.mode != "silent":
            yield TriggerEvent({"mode": self.mode})
            yield TriggerEvent("a second event is never read")

    async def cleanup(self) -> None:
        self.cleaned = True


def test_run_to_first_event() -> None:
    fire, boom, silent = Scripted("fire"), Scripted("raise"), Scripted("silent")
    kind, event, _ = asyncio.run(run_to_first_event(fire))
    assert (kind, event.payload, fire.cleaned) == (FIRED, {"mode": "fire"}, True)
    kind, error, tb = asyncio.run(run_to_first_event(boom))
    assert kind == FAILED and error == "ConnectionError: gone" and "Traceback" in tb
    kind, error, _ = asyncio.run(run_to_first_event(silent))
    assert kind == FAILED and "without yielding an event" in error


def _wait(cond: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_runner_outcomes_cancellation_and_watchdog() -> None:
    woken: list[int] = []
    runner = TriggerRunner(on_outcome=lambda: woken.append(1), lag_threshold=0.2)
    runner.start()
    try:
        slow = Scripted("fire", delay=30)
        serials = runner.add([(1, Scripted("fire"), "x.Scripted"), (2, slow, "x.Slow"),
                              (3, Scripted("block", delay=0.05), "x.Blocker")])
        _wait(lambda: len(runner._outbox) >= 2)
        outcomes = {o.trigger_id: o for o in runner.drain()}
        assert outcomes[1].kind == FIRED and outcomes[1].serial == serials[1]
        assert outcomes[3].kind == FIRED and woken
        assert runner.running_ids() == {2}
        runner.cancel([2])
        _wait(lambda: slow.cleaned)
        assert runner.drain() == [] and len(runner) == 0
        _wait(lambda: runner.blocked)
        assert runner.blocked[0][:2] == (3, "x.Blocker")
    finally:
        runner.stop()


def test_metrics_are_shared_by_name_and_rendered() -> None:
    a = metrics.counter("test_widgets", "Widgets made.")
    assert metrics.counter("test_widgets", "Widgets made.") is a
    a.inc(2)
    text = metrics.render().decode()
    assert "statewright_test_widgets_total 2.0" in text
    assert "statewright_triggers_fired_total" in text  # the triggerer's own


def test_a_held_datetime_trigger_has_no_instance_dict_but_subclasses_still_can() -> None:
    from datetime import UTC, datetime

    from statewright.sdk.triggers import DateTimeTrigger

    held = DateTimeTrigger(datetime(2030, 1, 1, tzinfo=UTC))
    assert not hasattr(held, "__dict__")  # a triggerer may hold 100,000 of them
    held.trigger_id = 7

    class Tagged(DateTimeTrigger):
        pass

    tagged = Tagged(datetime(2030, 1, 1, tzinfo=UTC))
    tagged.tag = "x"  # a user's subclass without __slots__ keeps its dict
    assert tagged.serialize()[1]["moment"] == held.moment
