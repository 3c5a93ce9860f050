"""Waking the loops of other processes when a transaction commits work for them (PostgreSQL).

In one process a committed transition reaches the loops through the door's listeners at once
(``events.dispatch``), and the local executor's supervisor relays its own over its pipe. A
process of its own — a Celery worker ending a try, a triggerer firing a trigger, the API
server triggering a run, a second scheduler — has no such path: without this, the scheduler
of another process saw that work only on its idle timer (``idle_seconds``, 1 s), and a
triggerer saw a new deferral only on its poll.

So on PostgreSQL the door's ``emit`` adds ``pg_notify`` to a transaction whose events give a
loop work: the notification is delivered when the transaction commits, and never when it
rolls back. Its payload is the origin (the process id whose own listeners heard the events
already) and what the events ask for: ``s`` a scheduler pass (``wakes_scheduler``), ``d`` a
triggerer's claim (a try deferred). A ``WakeListener`` thread holds one connection of its own
with ``LISTEN`` and calls its loop's ``wake`` for each foreign notification that asks for its
kind. When the server is unreachable it tries again every few seconds; the loops' timers
stay as they were, so a lost notification costs at most what it cost before.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, text
from sqlalchemy.engine import URL

log = logging.getLogger("statewright.wakeups")

CHANNEL = "statewright_wake"
SCHEDULER = "s"
TRIGGERER = "d"
_NOTIFY = text(f"SELECT pg_notify('{CHANNEL}', :payload)")
_origin: int | None = None
_NO_WAKE = frozenset({"running"})


def set_origin(pid: int | None) -> None:
    """The process whose listeners hear this process's events (the local executor's
    supervisor relays its events to the scheduler's process): its notifications carry that
    process's id, so that process does not wake twice for them. None: this process."""
    global _origin
    _origin = pid


def origin() -> int:
    return _origin if _origin is not None else os.getpid()


def wakes_scheduler(events: Sequence[Any]) -> bool:
    """Whether committed ``events`` may give a scheduler work: any change not made by a
    scheduler (whose own loop goes on by itself) other than a try starting."""
    return any(e.actor != "scheduler" and e.to not in _NO_WAKE for e in events)


def kinds(events: Sequence[Any]) -> str:
    """The loops ``events`` give work to: ``s`` (a scheduler), ``d`` (a triggerer)."""
    return ((SCHEDULER if wakes_scheduler(events) else "")
            + (TRIGGERER if any(e.to == "deferred" for e in events) else ""))


def notify(conn: Connection, events: Sequence[Any]) -> None:
    """In the transaction that commits ``events`` (PostgreSQL only): wake the other processes'
    loops they give work to, when it commits. A process whose events a scheduler hears over
    its pipe (``set_origin``: the local executor's supervisor) wakes no scheduler: its own
    hears them, and other schedulers were never woken by another's executor (with several,
    each success would wake them all for a pass that finds the run being evaluated)."""
    if conn.dialect.name != "postgresql":
        return
    wanted = kinds(events)
    if _origin is not None:
        wanted = wanted.replace(SCHEDULER, "")
    if wanted:
        conn.execute(_NOTIFY, {"payload": f"{origin()}:{wanted}"})


def _foreign(payload: str, kind: str) -> bool:
    pid, _, wanted = payload.partition(":")
    return kind in wanted and pid != str(os.getpid())


class WakeListener:
    """A thread that calls ``on_wake`` for each notification of ``kind`` another process
    commits (PostgreSQL). ``start`` returns at once; ``stop`` ends the thread."""

    def __init__(self, url: URL, kind: str, on_wake: Callable[[], None], *,
                 retry_seconds: float = 5.0) -> None:
        self.url = url
        self.kind = kind
        self.on_wake = on_wake
        self.retry_seconds = retry_seconds
        self.listening = threading.Event()
        """Set while a connection listens (tests wait for it before they notify)."""
        self._stop = threading.Event()
        self._conn: Any = None
        self._thread = threading.Thread(target=self._run, name=f"wake-listener-{kind}",
                                        daemon=True)

    def start(self) -> WakeListener:
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """Ends the thread within about a second (its wait for notifications); a connection
        attempt to an unreachable server may outlast ``timeout``: the thread is a daemon."""
        self._stop.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        failed = False
        while not self._stop.is_set():
            try:
                self._listen()
            except Exception as exc:
                if not failed:  # once per outage, not once per retry
                    log.warning("cannot listen for wake-ups on %s (%s: %s); the loop runs on "
                                "its timer until the database answers again", CHANNEL,
                                type(exc).__name__, exc)
                failed = True
            else:
                failed = False
            finally:
                self.listening.clear()
                self._close()
            self._stop.wait(self.retry_seconds)

    def _listen(self) -> None:
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

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
