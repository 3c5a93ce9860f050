"""One timer heap for the plain timer triggers the runner holds, instead of an asyncio task each.

A ``DateTimeTrigger`` (a ``TimeDeltaTrigger`` is stored as one) whose class keeps its ``run``
and ``cleanup`` does nothing but wait for a moment and yield it. Held as an asyncio task, each
costs a task, two coroutine frames, a future and a timer handle (about 2 KB, and the claim
spends most of its time making them). Here each costs one heap entry; one loop timer is armed
for the earliest moment. On the moment the trigger fires the event its ``run`` would yield,
read from the same clock (``temporal._now``), at most ``MAX_SLEEP_SECONDS`` between two reads of
it, so a clock that jumps is noticed as the trigger would notice it.

Loop thread only. A trigger removed (cancelled, started again) stays in the heap until its
moment or the next compaction, and is skipped: only ``held`` says what is live.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
from collections.abc import Callable, Iterable
from typing import Any

from statewright.sdk.triggers import temporal
from statewright.sdk.triggers.base import BaseTrigger, TriggerEvent

log = logging.getLogger("statewright.triggerer")

FIRE_BATCH = 1000
"""At most this many events fired in one turn of the loop; the rest on the next turns, so the
loop (its tick, the watchdog, the other triggers) keeps turning when 100,000 come due at once."""

_ASYNCIO_SLEEP = asyncio.sleep


def is_plain_timer(trigger: Any) -> bool:
    """Is ``trigger`` a timer the heap can hold in its place: a ``DateTimeTrigger`` (or a
    subclass) with their own ``run`` and ``cleanup``, while the sleep seam is the real one?"""
    cls = type(trigger)
    return (getattr(cls, "run", None) is temporal.DateTimeTrigger.run
            and getattr(cls, "cleanup", None) is BaseTrigger.cleanup
            and temporal._sleep is _ASYNCIO_SLEEP)


class TimerHeap:
    """Fires ``on_fire(trigger, event)`` once for each held trigger when its moment comes."""

    def __init__(self, loop: asyncio.AbstractEventLoop,
                 on_fire: Callable[[Any, TriggerEvent], None]) -> None:
        self.loop = loop
        self.on_fire = on_fire
        self.held: dict[int, Any] = {}
        """Trigger id -> the trigger held for it."""
        self._heap: list[tuple[float, int, Any]] = []  # (moment as a timestamp, seq, trigger)
        self._seq = itertools.count()
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._armed_for = float("inf")

    def __len__(self) -> int:
        return len(self.held)

    def add(self, trigger_id: int, trigger: Any) -> None:
        """Hold ``trigger`` (call ``rearm`` once the batch is added)."""
        self.held[trigger_id] = trigger
        heapq.heappush(self._heap, (trigger.moment.timestamp(), next(self._seq), trigger))

    def rearm(self) -> None:
        """Arm the loop's timer again if a moment added is earlier than the one it is set for."""
        if self._heap and self._heap[0][0] < self._armed_for:
            self._arm()

    def discard(self, trigger_ids: Iterable[int]) -> None:
        """Stop holding ``trigger_ids`` (their entries are skipped, then compacted away)."""
        for trigger_id in trigger_ids:
            self.held.pop(trigger_id, None)
        if len(self._heap) > 2 * len(self.held) + FIRE_BATCH:
            self._heap = [e for e in self._heap if self._holds(e[2])]
            heapq.heapify(self._heap)

    def _holds(self, trigger: Any) -> bool:
        return self.held.get(trigger.trigger_id) is trigger

    def clear(self) -> None:
        self.held.clear()
        self._heap.clear()
        self._disarm()

    def _disarm(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._handle, self._armed_for = None, float("inf")

    def _arm(self) -> None:
        """Arm the loop's timer for the earliest moment (a new earlier one re-arms it)."""
        self._disarm()
        if not self._heap:
            return
        self._armed_for = self._heap[0][0]
        delay = self._armed_for - temporal._now().timestamp()
        if delay <= 0:
            self._handle = self.loop.call_soon(self._fire_due)
        else:
            self._handle = self.loop.call_later(min(delay, temporal.MAX_SLEEP_SECONDS),
                                                self._fire_due)

    def _fire_due(self) -> None:
        self._handle, self._armed_for = None, float("inf")
        now = temporal._now().timestamp()
        heap, fired = self._heap, 0
        try:
            while heap and heap[0][0] <= now and fired < FIRE_BATCH:
                _, _, trigger = heapq.heappop(heap)
                if not self._holds(trigger):
                    continue  # removed meanwhile
                del self.held[trigger.trigger_id]
                fired += 1
                log.debug("trigger %s: moment %s reached", trigger.trigger_id,
                          trigger.moment.isoformat())
                self.on_fire(trigger, TriggerEvent(trigger.moment.isoformat()))
        finally:
            self._arm()
