"""The asyncio side of the triggerer: one event loop, in its own thread, running triggers.

Each trigger runs as one asyncio task until its first event (or its failure, or until it is
cancelled); a plain timer trigger is held in one timer heap instead (``timers``). Outcomes go
to a thread-safe outbox that the triggerer's main loop drains and writes to the database;
``on_outcome`` wakes that loop. A watchdog thread notices when the loop stops
turning (a trigger that blocks it with synchronous work) and logs the trigger's id and class.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from statewright.services.triggerer.timers import TimerHeap, is_plain_timer

log = logging.getLogger("statewright.triggerer")

FIRED = "fired"
FAILED = "failed"
_TASK_PREFIX = "trigger-"
"""An asyncio task running a trigger is named ``trigger-<id>``: the watchdog reads the id."""


@dataclass(frozen=True)
class Outcome:
    """What one run of a trigger came to. ``serial`` tells two runs of one trigger id apart."""

    kind: str  # FIRED | FAILED
    trigger_id: int
    serial: int
    event: Any = None  # TriggerEvent, when fired
    error: str | None = None
    traceback: str | None = None
    end_from_trigger: bool = False


async def run_to_first_event(
    trigger: Any, report: Callable[[Any, str, Any, str | None], None] | None = None
) -> tuple[str, Any, str | None]:
    """Run ``trigger.run()`` until its first event: ``(FIRED, event, None)``, or
    ``(FAILED, error, traceback)`` when it raises or ends without an event. Cancellation
    propagates. ``cleanup()`` runs in every case. With ``report``, ``report(trigger, *result)``
    is called once cleanup ran: a runner holding 100,000 triggers needs no coroutine or
    closure of its own around each one."""
    agen = trigger.run()
    result: tuple[str, Any, str | None]
    try:
        try:
            async for event in agen:
                result = (FIRED, event, None)
                break
            else:
                result = (FAILED, "the trigger's run() ended without yielding an event", None)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            result = (FAILED, f"{type(exc).__name__}: {exc}",
                      "".join(traceback.format_exception(exc)))
        finally:
            aclose = getattr(agen, "aclose", None)
            if aclose is not None:
                try:
                    await aclose()
                except Exception:
                    log.debug("closing trigger %s failed", getattr(trigger, "trigger_id", None),
                              exc_info=True)
    finally:
        try:
            await trigger.cleanup()
        except Exception:
            log.exception("cleanup of trigger %s failed", getattr(trigger, "trigger_id", None))
    if report is not None:
        report(trigger, *result)
    return result


class TriggerRunner:
    """Runs triggers in an asyncio loop on a thread of its own."""

    def __init__(
        self,
        *,
        on_outcome: Callable[[], None] | None = None,
        lag_threshold: float = 1.0,
        tick_seconds: float = 0.1,
    ) -> None:
        self.on_outcome = on_outcome
        self.lag_threshold = lag_threshold
        self.tick_seconds = tick_seconds
        self.loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]  # set by start()
        self._thread: threading.Thread | None = None
        self._watchdog: threading.Thread | None = None
        self._stopping = threading.Event()
        self._serials = itertools.count(1)
        self._lock = threading.Lock()
        # trigger id -> (serial, classpath, trigger): the trigger object tells its run apart
        self._running: dict[int, tuple[int, str, Any]] = {}
        self._tasks: dict[int, asyncio.Task[Any]] = {}  # loop thread only
        self._timers: TimerHeap = None  # type: ignore[assignment]  # set by start()
        self._outbox: deque[Outcome] = deque()
        self._last_tick = time.monotonic()
        self._tick_task: asyncio.Task[None] | None = None
        self.blocked: list[tuple[int | None, str | None, float]] = []
        """Blocking episodes seen by the watchdog: (trigger id, classpath, seconds)."""
        self.on_blocked: Callable[[int | None, str | None, float], None] | None = None

    # -- life cycle ---------------------------------------------------------------------------

    def start(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._timers = TimerHeap(self.loop, self._fired)
        self._thread = threading.Thread(target=self._run_loop, name="triggerer-loop",
                                        daemon=True)
        self._thread.start()
        self._watchdog = threading.Thread(target=self._watch, name="triggerer-watchdog",
                                          daemon=True)
        self._watchdog.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Cancel every trigger (their ``cleanup`` runs) and stop the loop."""
        self._stopping.set()
        if self._thread is None or not self._thread.is_alive():
            return
        future = asyncio.run_coroutine_threadsafe(self._cancel_all(), self.loop)
        try:
            future.result(timeout)
        except Exception:
            log.warning("triggers did not all stop within %ss", timeout)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if self._watchdog is not None:
            self._watchdog.join(timeout)

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self.loop)
        self._tick_task = self.loop.create_task(self._tick())
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    async def _tick(self) -> None:
        while True:
            self._last_tick = time.monotonic()
            await asyncio.sleep(self.tick_seconds)

    # -- triggers -----------------------------------------------------------------------------

    def add(self, triggers: Sequence[tuple[int, Any, str]]) -> dict[int, int]:
        """Start ``(trigger_id, trigger, classpath)`` items; returns id -> serial."""
        started: dict[int, int] = {}
        with self._lock:
            for trigger_id, trigger, classpath in triggers:
                serial = next(self._serials)
                # One string per class, not one per trigger: a triggerer may hold 100,000.
                self._running[trigger_id] = (serial, sys.intern(classpath), trigger)
                started[trigger_id] = serial
        items = [(tid, trig) for tid, trig, _ in triggers]
        if items:
            self.loop.call_soon_threadsafe(self._start_many, items)
        return started

    def cancel(self, trigger_ids: Iterable[int]) -> None:
        ids = list(trigger_ids)
        with self._lock:
            for tid in ids:
                self._running.pop(tid, None)
        if ids:
            self.loop.call_soon_threadsafe(self._cancel_many, ids)

    def running_ids(self) -> set[int]:
        with self._lock:
            return set(self._running)

    def serial_of(self, trigger_id: int) -> int | None:
        with self._lock:
            entry = self._running.get(trigger_id)
        return None if entry is None else entry[0]

    def classpath_of(self, trigger_id: int) -> str | None:
        with self._lock:
            entry = self._running.get(trigger_id)
        return None if entry is None else entry[1]

    def __len__(self) -> int:
        with self._lock:
            return len(self._running)

    def drain(self, limit: int | None = None) -> list[Outcome]:
        """Take up to ``limit`` outcomes from the outbox."""
        out: list[Outcome] = []
        while self._outbox and (limit is None or len(out) < limit):
            out.append(self._outbox.popleft())
        return out

    def give_back(self, outcomes: Sequence[Outcome]) -> None:
        """Put outcomes taken with ``drain`` back at the head of the outbox, in order: their
        write failed (the database out of reach) and the next one takes them again."""
        self._outbox.extendleft(reversed(outcomes))

    def has_outcomes(self) -> bool:
        return bool(self._outbox)

    def _start_many(self, items: Sequence[tuple[int, Any]]) -> None:
        tasks, timers = self._tasks, self._timers
        for trigger_id, trigger in items:
            if trigger_id in tasks or trigger_id in timers.held:
                self._cancel_many([trigger_id])  # started again: the old run is void
            trigger.trigger_id = trigger_id
            if is_plain_timer(trigger):
                timers.add(trigger_id, trigger)
                continue
            tasks[trigger_id] = self.loop.create_task(
                run_to_first_event(trigger, self._report), name=f"{_TASK_PREFIX}{trigger_id}")
        timers.rearm()

    def _cancel_many(self, ids: Sequence[int]) -> None:
        self._timers.discard(ids)
        for trigger_id in ids:
            task = self._tasks.pop(trigger_id, None)
            if task is not None:
                task.cancel()

    def _fired(self, trigger: Any, event: Any) -> None:
        """A timer of the heap reached its moment: what its ``run`` would have yielded."""
        self._report(trigger, FIRED, event, None)

    async def _cancel_all(self) -> None:
        self._timers.clear()
        tasks = [t for t in (*self._tasks.values(), self._tick_task) if t is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def _report(self, trigger: Any, kind: str, value: Any, tb: str | None) -> None:
        """The end of one run of a trigger (in its asyncio task, or fired by the timer heap)."""
        trigger_id = trigger.trigger_id
        task = asyncio.current_task()  # None for a timer of the heap
        if task is not None and self._tasks.get(trigger_id) is task:
            del self._tasks[trigger_id]
        with self._lock:
            entry = self._running.get(trigger_id)
            if entry is None or entry[2] is not trigger:
                return  # cancelled meanwhile, or started again: this run's outcome is void
            del self._running[trigger_id]
        if kind == FIRED:
            outcome = Outcome(FIRED, trigger_id, entry[0], event=value,
                              end_from_trigger=bool(getattr(trigger, "end_from_trigger", False)))
        else:
            outcome = Outcome(FAILED, trigger_id, entry[0], error=value, traceback=tb)
        self._outbox.append(outcome)
        if self.on_outcome is not None:
            self.on_outcome()

    # -- the watchdog ---------------------------------------------------------------------------

    def _watch(self) -> None:
        reported = False
        interval = max(self.tick_seconds, 0.05)
        while not self._stopping.wait(interval):
            lag = time.monotonic() - self._last_tick - self.tick_seconds
            if lag <= self.lag_threshold:
                reported = False
                continue
            if reported:
                continue
            reported = True
            trigger_id, classpath = self._blocking_trigger()
            self.blocked.append((trigger_id, classpath, lag))
            if trigger_id is None:
                log.warning("Triggerer event loop blocked for %.1fs (not inside a trigger)", lag)
            else:
                log.warning(
                    "Triggerer event loop blocked for %.1fs by trigger %s (%s): a trigger must "
                    "not block the loop; await instead, or run blocking calls with "
                    "asyncio.to_thread", lag, trigger_id, classpath)
            if self.on_blocked is not None:
                self.on_blocked(trigger_id, classpath, lag)

    def _blocking_trigger(self) -> tuple[int | None, str | None]:
        try:
            task = asyncio.current_task(self.loop)
        except RuntimeError:
            task = None
        name = task.get_name() if task is not None else ""
        if not name.startswith(_TASK_PREFIX):
            return None, None
        trigger_id = int(name[len(_TASK_PREFIX):])
        return trigger_id, self.classpath_of(trigger_id)
