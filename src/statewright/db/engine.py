"""Engines and transactions. SQLite runs in WAL mode with a busy timeout and BEGIN IMMEDIATE."""

from __future__ import annotations

import logging
import sqlite3
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, NoReturn

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError
from sqlalchemy.pool import NullPool

from statewright.core.errors import ConfigurationError
from statewright.db.writer_lock import WriterLock, for_database

_log = logging.getLogger("statewright.db")
_AFTER_COMMIT_KEY = "statewright_after_commit"
_WRITE = "statewright_write"

# The writer lock of each SQLite engine (see ``writer_lock``).
_engine_writer_locks: weakref.WeakKeyDictionary[Engine, WriterLock] = weakref.WeakKeyDictionary()


def make_engine(url: str, *, echo: bool = False) -> Engine:
    """Create an engine for ``url``; SQLite files get WAL, a busy timeout and serial writers."""
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    if url.startswith("sqlite"):
        return _sqlite_engine(url, echo=echo)
    engine = create_engine(url, echo=echo, pool_size=10, max_overflow=20)
    _ping_when_idle(engine, PING_IDLE_SECONDS)
    return engine


PING_IDLE_SECONDS = 1.0
"""A pooled connection idle for this long is pinged before use (see ``_ping_when_idle``)."""


def _ping_when_idle(engine: Engine, after: float) -> None:
    """Ping a pooled connection before use only when it sat idle for ``after`` seconds.

    A connection the server dropped (a restart, a failover, an idle timeout) is then replaced
    before a transaction starts on it, as with ``pool_pre_ping``; but a busy loop, which takes
    the connection it gave back a moment ago, does not pay a round trip per transaction (on
    PostgreSQL the ping was a tenth of the scheduler's and of a worker's time). A server
    restart takes seconds, longer than ``after``; an error on a connection it dropped anyway
    invalidates the whole pool, as before."""

    @event.listens_for(engine, "checkin")
    def _checkin(_dbapi_conn: Any, record: Any) -> None:
        record.info[_IDLE_SINCE] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checkout(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        since = record.info.pop(_IDLE_SINCE, None)
        if since is None or time.monotonic() - since < after:
            return
        try:
            engine.dialect.do_ping(dbapi_conn)
        except Exception as exc:
            raise DisconnectionError(f"a pooled connection was dropped: {exc}") from exc


_IDLE_SINCE = "statewright_idle_since"


def _sqlite_engine(url: str, *, echo: bool) -> Engine:
    path = url.split("///", 1)[1] if "///" in url else ""
    if path and path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url,
        echo=echo,
        connect_args={"timeout": 60, "check_same_thread": False},
        poolclass=NullPool if path in ("", ":memory:") else None,
    )
    if path and path != ":memory:":
        _engine_writer_locks[engine] = for_database(path)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        # Checkpoint the write-ahead log every 64 MiB rather than every 4 MiB: a loop that
        # writes thousands of rows does not pay for a checkpoint inside every commit.
        cur.execute("PRAGMA wal_autocheckpoint=16384")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A write transaction (``transaction``) takes the write lock up front: a deferred one
        # that reads and then writes fails at once with "database is locked" instead of
        # waiting. Every other transaction is a read: it begins deferred and never waits for,
        # nor blocks, a writer.
        # Straight on the driver's connection: every loop of every service begins several
        # transactions, and SQLAlchemy's statement path costs more than SQLite's BEGIN.
        statement = "BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE) else "BEGIN"
        try:
            conn.connection.driver_connection.execute(statement)  # type: ignore[union-attr]
        except sqlite3.Error as exc:
            raise DBAPIError.instance(statement, None, exc, sqlite3.Error) from exc

    return engine


def check_connection(engine: Engine, *, wait_seconds: float = 0.0,
                     sleep: Callable[[float], None] = time.sleep) -> None:
    """Raise ConfigurationError with a clear message when the database cannot be reached.

    With ``wait_seconds`` (a long-running service starting while its database restarts), try
    again with exponential backoff (0.2 s doubling to 5 s) for that long before giving up."""
    delay, waited = 0.2, 0.0
    while True:
        try:
            with engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            return
        except OperationalError as exc:
            if waited + delay > wait_seconds:
                _unreachable(engine, exc)
            _log.warning("the database is unreachable (%s); trying again in %.1fs",
                         str(exc.orig).strip().splitlines()[0], delay)
            sleep(delay)
            waited += delay
            delay = min(delay * 2, 5.0)


def _unreachable(engine: Engine, exc: OperationalError) -> NoReturn:
    url = engine.url.render_as_string(hide_password=True)
    raise ConfigurationError(
        f"Cannot connect to the database at {url}: {exc.orig}. Check that the server is "
        "running and that STATEWRIGHT_DATABASE_URL is right (for the embedded default, "
        "unset it to use SQLite under $STATEWRIGHT_HOME)."
    ) from None


@contextmanager
def transaction(engine: Engine) -> Iterator[Connection]:
    """One transaction; callbacks registered with ``after_commit`` run once it has committed."""
    with _after_commit_callbacks() as callbacks, write_connection(engine) as conn:
        conn.info[_AFTER_COMMIT_KEY] = callbacks
        try:
            yield conn
        finally:
            conn.info.pop(_AFTER_COMMIT_KEY, None)


@contextmanager
def transaction_on(conn: Connection) -> Iterator[Connection]:
    """``transaction`` on a connection the caller keeps open: a loop of many small writes (the
    flow recorder) skips the pool's checkout and return for each. One thread at a time."""
    lock = _engine_writer_locks.get(conn.engine)
    with _after_commit_callbacks() as callbacks, lock if lock is not None else nullcontext():
        conn.info[_AFTER_COMMIT_KEY] = callbacks
        try:
            with _begin_write(conn):
                yield conn
        finally:
            conn.info.pop(_AFTER_COMMIT_KEY, None)


@contextmanager
def _after_commit_callbacks() -> Iterator[list[Callable[[], None]]]:
    """The list ``after_commit`` fills; run once the block (the commit) ends without error."""
    callbacks: list[Callable[[], None]] = []
    yield callbacks
    for cb in callbacks:
        cb()


@contextmanager
def write_connection(engine: Engine) -> Iterator[Connection]:
    """A connection in one write transaction (on SQLite: the file's writer lock, then
    ``BEGIN IMMEDIATE``), committed at the end of the block and rolled back on an exception."""
    lock = _engine_writer_locks.get(engine)
    with lock if lock is not None else nullcontext(), engine.connect() as conn, \
            _begin_write(conn):
        yield conn


def _begin_write(conn: Connection) -> Any:
    conn.execution_options(**{_WRITE: True})
    return conn.begin()


@contextmanager
def read_snapshot(engine: Engine) -> Iterator[Connection]:
    """A read-only transaction: a consistent snapshot that never takes the write lock."""
    with engine.connect() as conn, conn.begin():
        yield conn


def after_commit(conn: Connection, callback: Callable[[], None]) -> None:
    """Run ``callback`` after the transaction of ``conn`` commits (at once when none is open)."""
    callbacks = conn.info.get(_AFTER_COMMIT_KEY)
    if callbacks is None:
        callback()
    else:
        callbacks.append(callback)


def index_reads(conn: Connection) -> None:
    """For the rest of this transaction, have PostgreSQL's planner read through indexes.

    The scheduler's probes ("does this run hold a task instance in one of these states?", the
    queueing candidates, the slots taken) are meant to be index lookups whose cost does not grow
    with the run. But ``task_instance`` changes faster than autovacuum refreshes its
    statistics: a run of 10,000 task instances moves them all from ``none`` to ``scheduled``
    to ``success`` within seconds, and with statistics taken before, the planner expects
    thousands of rows where there are none and reads the whole run with a sequential or
    bitmap scan (4-6 ms each, hundreds of times a minute). Turning those two off for the
    transaction leaves the planner the index paths; a read with no usable index still runs,
    as before. Nothing on SQLite."""
    if conn.dialect.name == "postgresql":
        conn.execute(_INDEX_READS)


_INDEX_READS = text("SELECT set_config('enable_seqscan', 'off', true), "
                    "set_config('enable_bitmapscan', 'off', true)")


def is_postgres(conn_or_engine: Connection | Engine) -> bool:
    return conn_or_engine.dialect.name == "postgresql"
