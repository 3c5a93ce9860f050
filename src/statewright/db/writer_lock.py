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
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import TracebackType

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


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
        self._thread_lock.acquire()
        try:
            if self._depth == 0:
                fd = self._file()
                if fd is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            self._thread_lock.release()
            raise
        self._depth += 1
        return self

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
