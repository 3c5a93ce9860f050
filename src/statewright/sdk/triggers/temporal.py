"""Triggers that fire at a moment in time: ``DateTimeTrigger`` and ``TimeDeltaTrigger``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from statewright.sdk.triggers.base import BaseTrigger, TriggerEvent, classpath_of

__all__ = ["DateTimeTrigger", "TimeDeltaTrigger"]

log = logging.getLogger(__name__)

#: The longest single sleep. Waking at least this often re-reads the clock, so a wall clock
#: that jumps (NTP, suspend) delays an event by at most this much.
MAX_SLEEP_SECONDS = 3600.0


def _utcnow() -> datetime:
    return datetime.now(UTC)


# Module-level seams, replaced in tests so that no test waits for the wall clock.
_now: Callable[[], datetime] = _utcnow
_sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep


class DateTimeTrigger(BaseTrigger):
    """Fire once, when the clock reaches ``moment`` (a timezone-aware datetime).

    The event's payload is the moment as an ISO 8601 string. A moment in the past fires at
    once. With ``end_from_trigger=True`` the triggerer ends the task successfully instead of
    resuming it on a worker.
    """

    __slots__ = ("end_from_trigger", "moment")

    def __init__(self, moment: datetime, *, end_from_trigger: bool = False) -> None:
        super().__init__()
        if not isinstance(moment, datetime):
            raise TypeError(
                f"DateTimeTrigger: moment must be a datetime, got {type(moment).__qualname__}"
            )
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise ValueError(
                f"DateTimeTrigger: moment {moment.isoformat()} has no timezone; pass an aware "
                "datetime, for example datetime(2026, 1, 1, tzinfo=timezone.utc)"
            )
        self.moment = moment
        self.end_from_trigger = bool(end_from_trigger)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        # Always the absolute form: a TimeDeltaTrigger is stored as the moment it computed,
        # so a restarted triggerer does not start the wait over.
        return (
            classpath_of(DateTimeTrigger),
            {"moment": self.moment, "end_from_trigger": self.end_from_trigger},
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            remaining = (self.moment - _now()).total_seconds()
            if remaining <= 0:
                break
            await _sleep(min(remaining, MAX_SLEEP_SECONDS))
        log.debug("trigger %s: moment %s reached", self.trigger_id, self.moment.isoformat())
        yield TriggerEvent(self.moment.isoformat())


class TimeDeltaTrigger(DateTimeTrigger):
    """Fire once, ``delta`` after the trigger is made (when the task defers).

    The moment is computed at construction, so the trigger is stored (and rebuilt after a
    triggerer restart) as a :class:`DateTimeTrigger` for that moment.
    """

    def __init__(self, delta: timedelta, *, end_from_trigger: bool = False) -> None:
        if not isinstance(delta, timedelta):
            raise TypeError(
                f"TimeDeltaTrigger: delta must be a timedelta, got {type(delta).__qualname__}"
            )
        self.delta = delta
        super().__init__(_now() + delta, end_from_trigger=end_from_trigger)
