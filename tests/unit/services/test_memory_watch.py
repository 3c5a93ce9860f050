"""A task process's memory is read once a second while it is busy, and before it is judged
idle: growth is never missed, and a pool of a thousand tries a second does not read /proc a
thousand times a second."""

from __future__ import annotations

import os

import pytest

from statewright.services.worker import memory
from statewright.services.worker.memory import READ_EVERY, MemoryWatch


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    sizes = iter(range(100, 10_000, 100))
    done: list[int] = []

    def rss(pid: int) -> int:
        done.append(next(sizes))
        return done[-1]

    monkeypatch.setattr(memory, "rss_bytes", rss)
    return done


def test_busy_reads_are_spaced_and_the_first_is_the_baseline(reads: list[int]) -> None:
    watch = MemoryWatch()
    watch.after_try(1, now=10.0)
    assert (watch.baseline, watch.latest) == (100, 100)
    for i in range(1, 10):  # nine tries within the second: none read
        watch.after_try(1, now=10.0 + i * READ_EVERY / 10)
    assert reads == [100] and watch.unread
    watch.after_try(1, now=10.0 + READ_EVERY)
    assert reads == [100, 200] and not watch.unread and watch.baseline == 100


def test_an_idle_process_is_read_before_it_is_judged(reads: list[int]) -> None:
    watch = MemoryWatch()
    watch.after_try(1, now=0.0)
    watch.after_try(1, now=0.1)  # grew in this try, not read yet
    assert not watch.grown_past(50)
    watch.refresh(1, now=0.2)
    assert watch.latest == 200 and watch.grown_past(50) and not watch.grown_past(100)
    watch.refresh(1, now=0.3)  # nothing new since: not read again
    assert reads == [100, 200]


def test_rss_of_this_process() -> None:
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("/proc")
    assert (memory.rss_bytes(os.getpid()) or 0) > 1 << 20
