"""Writers of one SQLite file take turns on the writer lock: threads and other processes."""

from __future__ import annotations

import multiprocessing as mp
import threading
from pathlib import Path
from typing import Any

from sqlalchemy import text

from statewright.db import writer_lock
from statewright.db.engine import make_engine, transaction


def _write_in_child(url: str, started: Any, done: Any) -> None:
    engine = make_engine(url)
    started.set()
    with transaction(engine) as conn:
        conn.execute(text("INSERT INTO t VALUES (2)"))
    done.set()


def test_a_writer_thread_waits_for_the_one_in_its_transaction(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path}/w.db")
    with transaction(engine) as conn:
        conn.execute(text("CREATE TABLE t (x INTEGER)"))
    entered = threading.Event()
    order: list[str] = []

    def second() -> None:
        with transaction(engine) as conn:
            entered.set()
            order.append("second")
            conn.execute(text("INSERT INTO t VALUES (2)"))

    with transaction(engine) as conn:
        conn.execute(text("INSERT INTO t VALUES (1)"))
        t = threading.Thread(target=second)
        t.start()
        assert not entered.wait(0.3), "a second writer got in while the first held the lock"
        order.append("first")
    t.join(10)
    assert entered.is_set() and order == ["first", "second"]
    with engine.connect() as conn:
        assert sorted(r[0] for r in conn.execute(text("SELECT x FROM t"))) == [1, 2]


def test_a_writer_in_another_process_waits_on_the_lock_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/w.db"
    engine = make_engine(url)
    with transaction(engine) as conn:
        conn.execute(text("CREATE TABLE t (x INTEGER)"))
    assert (tmp_path / "w.db.writer-lock").exists()
    ctx = mp.get_context("spawn")
    started, done = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_write_in_child, args=(url, started, done))
    with writer_lock.for_database(str(tmp_path / "w.db")):
        child.start()
        assert started.wait(30)
        assert not done.wait(0.5), "the other process wrote while this one held the lock"
    assert done.wait(30)
    child.join(10)
    assert child.exitcode == 0


def test_the_lock_is_reentrant_in_a_thread_and_one_per_file(tmp_path: Path) -> None:
    a = writer_lock.for_database(str(tmp_path / "x.db"))
    assert writer_lock.for_database(str(tmp_path / "." / "x.db")) is a
    assert writer_lock.for_database(str(tmp_path / "y.db")) is not a
    with a, a:
        pass
    got = threading.Event()

    def other() -> None:
        with a:
            got.set()

    t = threading.Thread(target=other)
    t.start()
    assert got.wait(5), "the lock stayed held after the nested blocks ended"
    t.join(5)


def _hold_lock(path: str, held: Any, release: Any) -> None:
    with writer_lock.for_database(path):
        held.set()
        release.wait(30)


def test_a_writer_stuck_behind_another_is_reported_with_the_holder(
        tmp_path: Path, monkeypatch: Any) -> None:
    import logging

    url = f"sqlite:///{tmp_path}/w.db"
    engine = make_engine(url)
    with transaction(engine) as conn:
        conn.execute(text("CREATE TABLE t (x INTEGER)"))
    monkeypatch.setattr(writer_lock, "STUCK_AFTER_SECONDS", 0.2)
    monkeypatch.setattr(writer_lock, "WATCH_EVERY_SECONDS", 0.05)
    monkeypatch.setattr(writer_lock, "_watchdog", None)  # a watchdog with these timings
    reported = threading.Event()
    messages: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if str(tmp_path) in record.getMessage():  # about this test's database only
                messages.append(record.getMessage())
                reported.set()

    handler = Catch(level=logging.WARNING)
    writer_lock.log.addHandler(handler)
    ctx = mp.get_context("spawn")
    held, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(tmp_path / "w.db"), held, release))
    holder.start()
    try:
        assert held.wait(30)
        writer = threading.Thread(target=lambda: _insert(engine))
        writer.start()
        assert reported.wait(10), "no report of the stuck writer"
        assert writer.is_alive()  # still waiting: reported, not failed
        assert f"held by pid {holder.pid}." in messages[0]
        assert str(tmp_path / "w.db") in messages[0]
    finally:
        release.set()
        holder.join(10)
        writer_lock.log.removeHandler(handler)
    writer.join(10)
    with engine.connect() as conn:
        assert [r[0] for r in conn.execute(text("SELECT x FROM t"))] == [7]
    assert len(messages) == 1  # once per wait


def _insert(engine: Any) -> None:
    with transaction(engine) as conn:
        conn.execute(text("INSERT INTO t VALUES (7)"))


def test_a_write_transaction_that_cannot_begin_raises_the_database_error(tmp_path: Path) -> None:
    """A writer outside statewright holds SQLite's lock: BEGIN IMMEDIATE fails after the busy
    timeout with SQLAlchemy's OperationalError ("database is locked"), as any statement would."""
    import sqlite3

    import pytest
    from sqlalchemy.exc import OperationalError

    from statewright.db import engine as engine_mod

    engine = make_engine(f"sqlite:///{tmp_path}/w.db")
    with transaction(engine) as conn:
        conn.execute(text("CREATE TABLE t (x INTEGER)"))
    outsider = sqlite3.connect(tmp_path / "w.db", isolation_level=None)
    outsider.execute("BEGIN IMMEDIATE")
    try:
        with engine.connect() as conn:
            conn.connection.driver_connection.execute("PRAGMA busy_timeout=50")  # type: ignore[union-attr]
            conn.execution_options(**{engine_mod._WRITE: True})
            with pytest.raises(OperationalError, match="database is locked"):
                conn.begin()
    finally:
        outsider.rollback()
        outsider.close()
    with transaction(engine) as conn:  # the next writer gets in
        conn.execute(text("INSERT INTO t VALUES (1)"))
