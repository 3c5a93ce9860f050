"""Waking the loops of other processes when a transaction commits work for them.

In one process a committed transition reaches the loops through the door's listeners at once
(``events.dispatch``), and the local executor's supervisor relays its own over its pipe. A
process of its own — a Celery worker ending a try, a triggerer firing a trigger, the API
server or the CLI triggering a run, a second scheduler — has no such path: without this, the
scheduler of another process saw that work only on its idle timer (``idle_seconds``, 1 s), and
a triggerer saw a new deferral only on its poll.

So the door's ``emit`` sends a wake-up for a transaction whose events give a loop work. Its
payload is the origin (the process id whose own listeners heard the events already) and what
the events ask for: ``s`` a scheduler pass (``wakes_scheduler``), ``d`` a triggerer's claim (a
try deferred). A ``WakeListener`` thread per loop calls the loop's ``wake`` for each foreign
wake-up of its kind. The loops' timers stay as they were: a lost wake-up costs at most what it
cost before.

- **PostgreSQL**: ``pg_notify`` in the transaction (delivered when it commits, never when it
  rolls back); each listener holds one connection of its own with ``LISTEN``, and when the
  server is unreachable connects again every few seconds.
- **SQLite** (the processes of one machine): after the commit, a datagram to each listener's
  Unix socket, in a folder private to the user (0700) named after the database file; a socket
  whose process is gone is removed by the first sender that finds it so. An in-memory
  database, or a system without Unix datagram sockets, has no wake-ups.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, text
from sqlalchemy.engine import URL

from statewright.db.engine import after_commit

log = logging.getLogger("statewright.wakeups")

CHANNEL = "statewright_wake"
SCHEDULER = "s"
TRIGGERER = "d"
_NOTIFY = text(f"SELECT pg_notify('{CHANNEL}', :payload)")
_origin: int | None = None
_NO_WAKE = frozenset({"running"})
_LISTING_SECONDS = 1.0  # a sender lists the listeners' sockets at most this often


def set_origin(pid: int | None) -> None:
    """The process whose listeners hear this process's events (the local executor's
    supervisor relays its events to the scheduler's process): its wake-ups carry that
    process's id, and wake no scheduler (``notify``). None: this process."""
    global _origin
    _origin = pid


def origin() -> int:
    return _origin if _origin is not None else os.getpid()


def _wakes(e: Any) -> bool:
    """A change not made by a scheduler (whose own loop goes on by itself) other than a try
    starting: it may give a scheduler work."""
    return bool(e.actor != "scheduler" and e.to not in _NO_WAKE)


def waking(events: Sequence[Any]) -> list[Any]:
    """Those of committed ``events`` that may give a scheduler work (``_wakes``)."""
    return [e for e in events if _wakes(e)]


def wakes_scheduler(events: Sequence[Any]) -> bool:
    """Whether committed ``events`` may give a scheduler work (``_wakes``)."""
    return any(_wakes(e) for e in events)


def kinds(events: Sequence[Any]) -> str:
    """The loops ``events`` give work to: ``s`` (a scheduler), ``d`` (a triggerer)."""
    return ((SCHEDULER if wakes_scheduler(events) else "")
            + (TRIGGERER if any(e.to == "deferred" for e in events) else ""))


def notify(conn: Connection, events: Sequence[Any]) -> None:
    """In the transaction that commits ``events``: wake the other processes' loops they give
    work to, when it commits. A process whose events a scheduler hears over its pipe
    (``set_origin``: the local executor's supervisor) wakes no scheduler: its own hears them,
    and other schedulers were never woken by another's executor (with several, each success
    would wake them all for a pass that finds the run being evaluated)."""
    wanted = kinds(events)
    if _origin is not None:
        wanted = wanted.replace(SCHEDULER, "")
    if not wanted:
        return
    payload = f"{origin()}:{wanted}"
    if conn.dialect.name == "postgresql":
        conn.execute(_NOTIFY, {"payload": payload})
    elif conn.dialect.name == "sqlite":
        folder = _folder(conn.engine.url)
        if folder is not None:
            after_commit(conn, lambda: _post(folder, payload, wanted))


def _foreign(payload: str, kind: str) -> bool:
    pid, _, wanted = payload.partition(":")
    return kind in wanted and pid != str(os.getpid())


# -- SQLite: datagrams to the listeners of one machine ---------------------------------------


@cache
def _folder(url: URL) -> Path | None:
    """The folder of the listeners' sockets for the SQLite database of ``url``: private to
    this user, named by the database file's path (short: a socket's path has ~100 bytes)."""
    db = url.database
    if (url.get_backend_name() != "sqlite" or not db or db == ":memory:"
            or url.query.get("mode") == "memory" or not hasattr(socket, "AF_UNIX")):
        return None
    key = hashlib.sha256(str(Path(db).resolve()).encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"statewright-wake-{os.getuid()}" / key
    return folder if len(str(folder)) <= 80 else None


_listing: dict[Path, tuple[float, list[str]]] = {}


def _post(folder: Path, payload: str, wanted: str) -> None:
    """Send ``payload`` to every other process's listener of a kind in ``wanted``. Never
    raises: a wake-up is a hint."""
    try:
        names = _listeners(folder)
        me = f"{os.getpid()}."
        data = payload.encode()
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.setblocking(False)
            for name in names:
                if name.startswith(me) or name.rpartition(".")[2] not in wanted:
                    continue
                _send_one(sock, folder / name, data)
    except Exception:  # a wake-up is a hint: it never fails the commit's other callbacks
        log.debug("could not send a wake-up", exc_info=True)


def _listeners(folder: Path) -> list[str]:
    now = time.monotonic()
    cached = _listing.get(folder)
    if cached is not None and now - cached[0] < _LISTING_SECONDS:
        return cached[1]
    try:
        names = [e.name for e in os.scandir(folder)]
    except FileNotFoundError:
        names = []
    _listing[folder] = (now, names)
    return names


def _send_one(sock: socket.socket, path: Path, data: bytes) -> None:
    try:
        sock.sendto(data, str(path))
    except OSError as exc:
        if exc.errno in (errno.ECONNREFUSED, errno.ENOENT):  # its process is gone
            with contextlib.suppress(OSError):
                path.unlink()
            _listing.pop(path.parent, None)
        # EAGAIN: its queue is full, so a wake-up is waiting for it already


def _bind(folder: Path, path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        for attempt in range(3):
            try:
                for d in (folder.parent, folder):
                    d.mkdir(mode=0o700, exist_ok=True)
                for d in (folder.parent, folder):  # another user's folder is not ours
                    st = d.stat()
                    if st.st_uid != os.getuid() or st.st_mode & 0o077:
                        raise PermissionError(f"{d} is not private to this user")
                sock.bind(str(path))
                break
            except FileNotFoundError:  # the last listener of another process took it away
                if attempt == 2:
                    raise
        sock.settimeout(1.0)
    except BaseException:
        sock.close()
        raise
    return sock


def _unbind(path: Path) -> None:
    """Take a stopped listener's socket away, and its database's folder with it when it was
    the last (a suite or a machine that opens many databases leaves no folder per database)."""
    with contextlib.suppress(OSError):
        path.unlink()
    with contextlib.suppress(OSError):  # not empty: another listener's
        path.parent.rmdir()


_serial = iter(range(1, 1 << 62))


def _socket_path(folder: Path, kind: str) -> Path:
    """``<pid>.<n>.<kind>``: one per listener (a process may run several loops), removed by
    the listener when it stops, else by the first sender that finds its process gone."""
    path = folder / f"{os.getpid()}.{next(_serial)}.{kind}"
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a process of the same id that died
    return path


# -- the listener ---------------------------------------------------------------------------


class WakeListener:
    """A thread that calls ``on_wake`` for each wake-up of ``kind`` another process commits.
    ``start`` returns at once; ``stop`` ends the thread."""

    def __init__(self, url: URL, kind: str, on_wake: Callable[[], None], *,
                 retry_seconds: float = 5.0) -> None:
        self.url = url
        self.kind = kind
        self.on_wake = on_wake
        self.retry_seconds = retry_seconds
        self.listening = threading.Event()
        """Set while it listens (tests wait for it before they send)."""
        self._stop = threading.Event()
        self._conn: Any = None
        self._thread = threading.Thread(target=self._run, name=f"wake-listener-{kind}",
                                        daemon=True)

    @classmethod
    def start_for(cls, url: URL, kind: str, on_wake: Callable[[], None]
                  ) -> WakeListener | None:
        """A started listener for the database of ``url``; None where there are no wake-ups
        (an in-memory SQLite database)."""
        if url.get_backend_name() != "postgresql" and _folder(url) is None:
            return None
        return cls(url, kind, on_wake).start()

    def start(self) -> WakeListener:
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """Ends the thread within about a second (its wait for wake-ups); a connection
        attempt to an unreachable server may outlast ``timeout``: the thread is a daemon."""
        self._stop.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        failed = False
        while not self._stop.is_set():
            try:
                if self.url.get_backend_name() == "postgresql":
                    self._listen_pg()
                else:
                    self._listen_sqlite()
            except Exception as exc:
                if not failed:  # once per outage, not once per retry
                    log.warning("cannot listen for wake-ups (%s: %s); the loop runs on its "
                                "timer until it can", type(exc).__name__, exc)
                failed = True
            else:
                failed = False
            finally:
                self.listening.clear()
                self._close()
            self._stop.wait(self.retry_seconds)

    def _listen_pg(self) -> None:
        import psycopg

        dsn = self.url.set(drivername="postgresql").render_as_string(hide_password=False)
        self._conn = psycopg.connect(dsn, autocommit=True, connect_timeout=10)
        self._conn.execute(f"LISTEN {CHANNEL}")
        self.listening.set()
        while not self._stop.is_set():
            # Returns after each second without a notification, to see ``stop``.
            for n in self._conn.notifies(timeout=1.0):
                if _foreign(n.payload, self.kind):
                    self.on_wake()

    def _listen_sqlite(self) -> None:
        folder = _folder(self.url)
        assert folder is not None
        path = _socket_path(folder, self.kind)
        self._conn = sock = _bind(folder, path)
        self.listening.set()
        try:
            while not self._stop.is_set():
                try:
                    data = sock.recv(256)
                except TimeoutError:
                    continue  # each second: ``stop``?
                if _foreign(data.decode(errors="replace"), self.kind):
                    self.on_wake()
        finally:
            _unbind(path)

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
