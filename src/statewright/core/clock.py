"""Clocks. Services take a clock so tests advance time instead of sleeping."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def __call__(self) -> datetime: ...


def utcnow() -> datetime:
    """The wall clock, timezone-aware UTC."""
    return datetime.now(UTC)


class ManualClock:
    """A clock that moves only when told to (for tests and simulations)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, delta: timedelta | float) -> datetime:
        if not isinstance(delta, timedelta):
            delta = timedelta(seconds=delta)
        with self._lock:
            self._now += delta
            return self._now

    def set(self, moment: datetime) -> None:
        with self._lock:
            self._now = moment
