"""A transaction whose events give a loop work wakes the loops of other processes at commit
(``db.wakeups``: on PostgreSQL ``pg_notify`` in the transaction and a ``LISTEN`` thread per
loop; on SQLite a datagram to each listener's Unix socket after the commit): a scheduler sees a
run another process triggered, or a try a Celery worker ended, at once rather than on its idle
timer; a triggerer sees another process's deferral."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psycopg
from sqlalchemy import Engine, text
from tests.noop import NoopOperator

from statewright.core.clock import utcnow
from statewright.db import wakeups
from statewright.sdk import DAG
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
WAIT = 120.0  # a bound for a loaded machine; each wait ends as soon as its event comes


def _event(to: str, actor: str = "executor") -> Any:
    return SimpleNamespace(to=to, actor=actor)


class _Calls:
    """Counts a listener's wake-ups; ``reach(n)`` waits until there were ``n``."""

    def __init__(self) -> None:
        self.n = 0
        self._cond = threading.Condition()

    def __call__(self) -> None:
        with self._cond:
            self.n += 1
            self._cond.notify_all()

    def reach(self, n: int) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.n >= n, WAIT)


def _listening(engine: Engine, kind: str) -> tuple[wakeups.WakeListener, _Calls]:
    calls = _Calls()
    listener = wakeups.WakeListener(engine.url, kind, calls).start()
    assert listener.listening.wait(WAIT)
    return listener, calls


def _notify_as(engine: Engine, pid: int | None, events: list[Any], *,
               rollback: bool = False) -> None:
    """What the door's ``emit`` sends for ``events`` from this process (``pid``: as the local
    executor's supervisor, whose events its scheduler hears over the pipe)."""
    wakeups.set_origin(pid)
    try:
        with engine.connect() as conn:
            conn.begin()
            wakeups.notify(conn, events)
            conn.rollback() if rollback else conn.commit()
    finally:
        wakeups.set_origin(None)


def _send(engine: Engine, payload: str, *, rollback: bool = False) -> None:
    """A notification as another process (``pid:kinds``) sends it."""
    with engine.connect() as conn:
        conn.begin()
        conn.execute(text("SELECT pg_notify(:c, :p)"), {"c": wakeups.CHANNEL, "p": payload})
        conn.rollback() if rollback else conn.commit()


def _until(predicate: Callable[[], bool]) -> bool:
    """Whether ``predicate`` holds within ``WAIT`` (checked every 50 ms: a state of another
    thread that no event announces)."""
    done = threading.Event()
    for _ in range(int(WAIT * 20)):
        if predicate():
            return True
        done.wait(0.05)
    return predicate()


def test_what_the_kinds_are() -> None:
    assert wakeups.kinds([_event("success")]) == "s"
    assert wakeups.kinds([_event("deferred")]) == "sd"
    assert wakeups.kinds([_event("running")]) == ""  # a try starting: no loop's work
    assert wakeups.kinds([_event("queued", actor="scheduler")]) == ""  # its own loop goes on


def test_only_another_process_committed_wake_up_reaches_the_listener(pg_engine: Engine) -> None:
    listener, calls = _listening(pg_engine, wakeups.SCHEDULER)
    try:
        _notify_as(pg_engine, None, [_event("success")])  # this process: heard in-process
        _send(pg_engine, "1:s", rollback=True)  # never committed
        _send(pg_engine, "1:d")  # a triggerer's kind
        _send(pg_engine, "1:s")  # another process: wakes
        # Notifications arrive in commit order: once the last one is heard, so were the others.
        assert calls.reach(1)
        _send(pg_engine, "1:sd")
        assert calls.reach(2)
        assert calls.n == 2
    finally:
        listener.stop()


def test_a_local_executors_supervisor_wakes_triggerers_only(pg_engine: Engine) -> None:
    """Its scheduler hears its events over the pipe; other schedulers are not woken by them
    (as before), a triggerer of another process is, for a deferral."""
    schedulers, s_calls = _listening(pg_engine, wakeups.SCHEDULER)
    triggerers, d_calls = _listening(pg_engine, wakeups.TRIGGERER)
    try:
        _notify_as(pg_engine, 1, [_event("success")])  # the supervisor: nothing sent
        _notify_as(pg_engine, 1, [_event("deferred")])  # the supervisor: triggerers only
        assert d_calls.reach(1)
        _send(pg_engine, "1:s")  # after those: once it is heard, they were
        assert s_calls.reach(1)
        assert s_calls.n == 1 and d_calls.n == 1
    finally:
        schedulers.stop()
        triggerers.stop()


def test_a_listener_whose_connection_is_killed_listens_again(pg_engine: Engine) -> None:
    calls = _Calls()
    listener = wakeups.WakeListener(pg_engine.url, wakeups.TRIGGERER, calls,
                                    retry_seconds=0.1).start()
    try:
        assert listener.listening.wait(WAIT)
        pid = _backend(listener)
        admin = pg_engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(admin, autocommit=True) as c:
            c.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert _until(lambda: listener.listening.is_set() and _backend(listener) not in (None, pid))
        _send(pg_engine, "1:d")
        assert calls.reach(1)
    finally:
        listener.stop()


def _backend(listener: wakeups.WakeListener) -> int | None:
    """The server process of the listener's connection (None while it has none)."""
    conn = listener._conn
    try:
        return None if conn is None or conn.closed else int(conn.info.backend_pid)
    except psycopg.Error:
        return None


class _Recording:
    """An executor that only records what it was handed."""

    identity = "recording"

    def __init__(self) -> None:
        self.queued = threading.Event()

    def slots_available(self) -> int:
        return 10

    def queue_workloads(self, ti_ids: Any) -> None:
        self.queued.set()


def test_a_scheduler_queues_a_run_another_process_triggered_without_its_timer(
        harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    with DAG("woken", schedule=None) as dag:
        NoopOperator(task_id="t")
    h.sync(dag)
    executor = _Recording()
    # An idle timer of ten minutes: only a wake-up can start the run within the test.
    scheduler = Scheduler(engine, executor, clock=utcnow,
                          config=SchedulerConfig(idle_seconds=600.0))
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(stop,), daemon=True)
    thread.start()
    try:
        assert _until(lambda: scheduler.wake_listener is not None
                      and scheduler.wake_listener.listening.is_set())
        url = engine.url.render_as_string(hide_password=False)
        subprocess.run([sys.executable, "-c", _TRIGGER, url], check=True, timeout=WAIT,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert executor.queued.wait(WAIT)
    finally:
        stop.set()
        scheduler.wake()
        thread.join(WAIT)
    assert [r.run_id for r in h.runs("woken")] == ["elsewhere"]


_TRIGGER = """
import sys
from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import make_engine, transaction
from statewright.services.dag_runs import trigger_dag
engine = make_engine(sys.argv[1])
with transaction(engine) as conn:
    trigger_dag(conn, "woken", now=utcnow(), actor=Actor.USER, run_id="elsewhere")
"""


def _sqlite_listener(engine: Engine, kind: str) -> tuple[wakeups.WakeListener, _Calls, Path]:
    listener, calls = _listening(engine, kind)
    folder = wakeups._folder(engine.url)
    assert folder is not None
    [path] = [p for p in folder.iterdir() if p.name.startswith(f"{os.getpid()}.")
              and p.name.endswith(f".{kind}")]
    return listener, calls, path


def test_on_sqlite_a_foreign_datagram_of_its_kind_wakes_the_listener(
        sqlite_engine: Engine) -> None:
    listener, calls, path = _sqlite_listener(sqlite_engine, wakeups.SCHEDULER)
    try:
        folder = path.parent
        assert oct(folder.stat().st_mode & 0o777) == oct(0o700)  # private to this user
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            for payload in (f"{os.getpid()}:s", "1:d", "1:s"):  # own, other kind, foreign
                sock.sendto(payload.encode(), str(path))
            assert calls.reach(1)
            sock.sendto(b"1:s", str(path))
            assert calls.reach(2)
        assert calls.n == 2
    finally:
        listener.stop()
    assert not path.exists()  # a listener that stops takes its socket away


def test_on_sqlite_the_last_listener_to_stop_takes_the_databases_folder_away(
        tmp_path: Path) -> None:
    from statewright.db.engine import make_engine

    engine = make_engine(f"sqlite:///{tmp_path}/own.db")
    try:
        first, _, path = _sqlite_listener(engine, wakeups.SCHEDULER)
        second, _ = _listening(engine, wakeups.TRIGGERER)
        first.stop()
        assert not path.exists() and path.parent.is_dir()  # the other listener's folder
        second.stop()
        assert not path.parent.exists()
        again, calls = _listening(engine, wakeups.SCHEDULER)  # made again when needed
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                [name] = [p.name for p in path.parent.iterdir()]
                sock.sendto(b"1:s", str(path.parent / name))
            assert calls.reach(1)
        finally:
            again.stop()
    finally:
        engine.dispose()


def test_on_sqlite_a_sender_removes_the_socket_of_a_process_that_is_gone(
        sqlite_engine: Engine) -> None:
    listener, calls, path = _sqlite_listener(sqlite_engine, wakeups.SCHEDULER)
    try:
        stale = path.parent / "999999999.1.s"
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as dead:
            dead.bind(str(stale))  # bound, then closed: its process is gone
        wakeups._listing.clear()
        # Sent as another process (this one's own listeners are skipped by the sender).
        subprocess.run([sys.executable, "-c", _POST, str(path.parent)], check=True,
                       timeout=WAIT, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert calls.reach(1)
        assert not stale.exists()
    finally:
        listener.stop()


_POST = """
import sys
from pathlib import Path
from statewright.db import wakeups
wakeups._post(Path(sys.argv[1]), "1:s", "s")
"""
