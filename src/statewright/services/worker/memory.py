"""How much memory a task process holds, read from ``/proc`` (Linux; elsewhere, unknown)."""

from __future__ import annotations

import os
from dataclasses import dataclass

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


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
    task's modules) and after its latest."""

    baseline: int | None = None
    latest: int | None = None

    def after_try(self, pid: int) -> None:
        rss = rss_bytes(pid)
        if self.baseline is None:
            self.baseline = rss
        self.latest = rss

    def grown_past(self, limit: int | None) -> bool:
        """Has it grown more than ``limit`` bytes past its baseline?"""
        return (limit is not None and self.baseline is not None and self.latest is not None
                and self.latest - self.baseline > limit)
