"""Writers of one SQLite file take turns on a lock that wakes the next one at once.

SQLite lets one writer in at a time. A writer that finds the file locked waits in SQLite's busy
handler, which sleeps in growing steps (1, 2, 5, 10, 15, 20, 25 ms …) and so wakes well after the
previous writer has committed: with the scheduler, the executor and the triggerer writing small
transactions all the time, those late wake-ups become most of the time a task waits.

So every write transaction on a SQLite file (``engine.write_connection``) first takes this lock:
a thread lock, for the threads of one process, then an exclusive ``flock`` on
``<database>.writer-lock`` next to the file, for the other processes on the machine (a
triggerer, a worker, a CLI command). The kernel hands the ``flock`` to the next waiter the moment
it is released. The lock adds nothing to correctness (``BEGIN IMMEDIATE`` still takes SQLite's
own lock, and a writer that does not use this module still meets the busy handler); it only
orders the writers. A process that dies releases its ``flock`` with it.

On a system without ``fcntl`` (Windows) only the thread lock is used.

A writer that has waited longer than ``STUCK_AFTER_SECONDS`` is reported by a watchdog thread,
once per wait, with the process holding the lock (from ``/proc/locks`` on Linux): a writer that
never commits (a process stopped in a debugger, a hung disk) stops every other writer, and the
log says which one it is.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from types import TracebackType

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


log = logging.getLogger("statewright.db.writer_lock")

STUCK_AFTER_SECONDS = 30.0
WATCH_EVERY_SECONDS = 5.0


class WriterLock:
    """Re-entrant within a thread (an inner write transaction then meets SQLite's own lock)."""

    def __init__(self, database: Path) -> None:
        self.path = database.with_name(database.name + ".writer-lock")
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        self._fd_pid: int | None = None

    def _file(self) -> int | None:
        if fcntl is None:
            return None
        if self._fd is None or self._fd_pid != os.getpid():  # a forked copy opens its own
            try:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError:  # a read-only folder: the thread lock and SQLite's lock remain
                self._fd = None
            self._fd_pid = os.getpid()
        return self._fd

    def __enter__(self) -> WriterLock:
        me = threading.get_ident()
        _waiting[me] = (time.monotonic(), self)
        _ensure_watchdog()
        try:
            self._thread_lock.acquire()
            try:
                if self._depth == 0:
                    fd = self._file()
                    if fd is not None:
                        fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                self._thread_lock.release()
                raise
        finally:
            _waiting.pop(me, None)
        self._depth += 1
        return self

    def holder(self) -> str:
        """The process holding the lock file (``pid <n>``), from ``/proc/locks``."""
        try:
            inode = os.stat(self.path).st_ino
            with open("/proc/locks", encoding="ascii", errors="replace") as fh:
                for line in fh:
                    parts = line.split()
                    if ("FLOCK" in parts and "->" not in parts and len(parts) >= 6
                            and parts[5].rsplit(":", 1)[-1] == str(inode)):
                        return f"pid {parts[4]}"
        except OSError:
            pass
        return "a process not visible from here"

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._depth -= 1
        try:
            if self._depth == 0 and self._fd is not None and self._fd_pid == os.getpid():
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._thread_lock.release()


_locks: dict[Path, WriterLock] = {}
_guard = threading.Lock()


def for_database(path: str) -> WriterLock:
    """The one lock of this process for the SQLite file at ``path``."""
    key = Path(path).resolve()
    with _guard:
        lock = _locks.get(key)
        if lock is None:
            lock = _locks[key] = WriterLock(key)
        return lock


_waiting: dict[int, tuple[float, WriterLock]] = {}
_watchdog: threading.Thread | None = None
_watchdog_guard = threading.Lock()


def _ensure_watchdog() -> None:
    global _watchdog
    if _watchdog is not None and _watchdog.is_alive():
        return
    with _watchdog_guard:
        if _watchdog is None or not _watchdog.is_alive():
            _watchdog = threading.Thread(target=_watch, name="writer-lock-watchdog",
                                         daemon=True)
            _watchdog.start()


def _watch() -> None:
    reported: set[tuple[int, float]] = set()
    while True:
        time.sleep(WATCH_EVERY_SECONDS)
        if _watchdog is not threading.current_thread():
            return  # replaced (a test's shorter timings): one watchdog reports each wait
        now = time.monotonic()
        current = dict(_waiting)
        reported &= {(ident, since) for ident, (since, _) in current.items()}
        for ident, (since, lock) in current.items():
            if now - since < STUCK_AFTER_SECONDS or (ident, since) in reported:
                continue
            reported.add((ident, since))
            log.warning(
                "A write transaction has waited %.0fs for the writer lock of %s, held by %s. "
                "A writer that never commits stops every other writer; see 'A stuck writer' in "
                "docs/troubleshooting.md.", now - since, lock.path.with_suffix(""),
                lock.holder())