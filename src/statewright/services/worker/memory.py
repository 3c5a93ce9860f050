"""How much memory a task process holds, read from ``/proc`` (Linux; elsewhere, unknown)."""

from __future__ import annotations

import os
from dataclasses import dataclass

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
READ_EVERY = 1.0
"""Seconds between two reads of a busy process's memory: a pool that runs a thousand tries a
second reads each process once a second, not once a try; an idle one is read before it is
judged (``refresh``)."""


def rss_bytes(pid: int) -> int | None:
    """The resident memory of process ``pid``, or None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class MemoryWatch:
    """A task process's memory after its first try (its baseline: the DAG file imported, the
    task's modules) and after its latest (read at most every ``READ_EVERY`` seconds while it
    is busy, and before it is judged idle)."""

    baseline: int | None = None
    latest: int | None = None
    read_at: float | None = None
    unread: bool = False
    """A try ended since the last read."""

    def after_try(self, pid: int, now: float) -> None:
        if self.read_at is None or now - self.read_at >= READ_EVERY:
            self._read(pid, now)
        else:
            self.unread = True

    def refresh(self, pid: int, now: float) -> None:
        """Read what a try left unread (the process is idle: it is about to be judged)."""
        if self.unread:
            self._read(pid, now)

    def _read(self, pid: int, now: float) -> None:
        rss = rss_bytes(pid)
        if self.baseline is None:
            self.baseline = rss
        self.latest, self.read_at, self.unread = rss, now, False

    def grown_past(self, limit: int | None) -> bool:
        """Has it grown more than ``limit`` bytes past its baseline?"""
        return (limit is not None and self.baseline is not None and self.latest is not None
                and self.latest - self.baseline > limit)
