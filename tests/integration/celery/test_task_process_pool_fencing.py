"""The task process pool that Celery workers run tries in: fenced starts, duplicates in one batch,
the outcome each submitter is told, and the lease that kills a try the database no longer hears
about. On SQLite and PostgreSQL, without a broker."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from statewright.core.clock import utcnow
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.db.tables import task_instance
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.worker.process_pool import NOT_STARTED, Done, TaskProcessPool

DAG = textwrap.dedent('''
    import time
    from statewright.sdk import DAG, task

    with DAG("fenced"):
        @task
        def once():
            with open(MARKS, "a") as fh:
                fh.write("ran\\n")
            return 1

        once()

    with DAG("hangs"):
        @task
        def forever():
            with open(MARKS, "a") as fh:
                fh.write("hangs\\n")
            time.sleep(60)

        forever()
''')


def _queue_one(engine: Engine, tmp_path: Path, dag_id: str, task_id: str) -> int:
    """The DAGs above, and one task instance of ``dag_id`` queued at try 0."""
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "fenced.py").write_text(
        DAG.replace("MARKS", repr(str(tmp_path / "marks"))))
    DagProcessor(engine, tmp_path / "dags").run_once()
    now = utcnow()
    with transaction(engine) as conn:
        run_pk, _ = trigger_dag(conn, dag_id, now=now, actor=Actor.USER)
        ti = ti_repo.get_by_key(conn, run_pk, task_id)
        for frm, to in ((TI.NONE, TI.SCHEDULED), (TI.SCHEDULED, TI.QUEUED)):
            door.set_task_instance_state(conn, ti.id, frm=frm, to=to, actor=Actor.SCHEDULER,
                                         now=now)
    return int(ti.id)


@pytest.fixture
def queued(engine: Engine, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A task instance queued at try 0, and a started pool of two task processes."""
    ti_id = _queue_one(engine, tmp_path, "fenced", "once")
    pool = TaskProcessPool(engine, processes=2, heartbeat_seconds=0.5,
                           start_actor=Actor.WORKER)
    pool.start()
    try:
        yield {"engine": engine, "pool": pool, "ti_id": ti_id, "marks": tmp_path / "marks"}
    finally:
        pool.stop()


class _Collector:
    def __init__(self, expected: int) -> None:
        self.done: list[Done] = []
        self._lock = threading.Lock()
        self._all = threading.Event()
        self.expected = expected

    def __call__(self, done: Done) -> None:
        with self._lock:
            self.done.append(done)
            if len(self.done) >= self.expected:
                self._all.set()

    def wait(self, timeout: float = 30) -> list[str]:
        assert self._all.wait(timeout), f"only {self.done} reported"
        return sorted(d.outcome for d in self.done)


def _starts(engine: Engine, ti_id: int) -> list[tuple[str, int]]:
    with engine.connect() as conn:
        return [(h.actor, h.try_number) for h in transitions_log.for_task_instance(conn, ti_id)
                if (h.from_state, h.to_state) == ("queued", "running")]


def test_the_same_message_three_times_in_one_batch_runs_one_try(queued: dict[str, Any]) -> None:
    pool, ti_id = queued["pool"], queued["ti_id"]
    got = _Collector(3)
    pool.submit([ti_id, ti_id, ti_id], fences={ti_id: 0}, on_done=got)
    assert got.wait() == [NOT_STARTED, NOT_STARTED, "success"]
    assert _starts(queued["engine"], ti_id) == [("worker", 1)]
    assert queued["marks"].read_text() == "ran\n"


def test_a_stale_fence_starts_nothing_and_the_right_one_after_it_starts_the_try(
        queued: dict[str, Any]) -> None:
    pool, ti_id = queued["pool"], queued["ti_id"]
    stale, right = _Collector(1), _Collector(1)
    pool.submit([ti_id], fences={ti_id: 7}, on_done=stale)  # queued at try 0, not 7
    pool.submit([ti_id], fences={ti_id: 0}, on_done=right)
    assert stale.wait() == [NOT_STARTED]
    assert right.wait() == ["success"]
    assert right.done[0].try_number == 1
    with queued["engine"].connect() as conn:
        ti = ti_repo.get(conn, ti_id)
    assert (ti.state, ti.try_number) == ("success", 1)
    assert _starts(queued["engine"], ti_id) == [("worker", 1)]
    late = _Collector(1)  # and once it finished, the same message again: nothing
    pool.submit([ti_id], fences={ti_id: 0}, on_done=late)
    assert late.wait() == [NOT_STARTED]
    assert queued["marks"].read_text() == "ran\n"


@contextlib.contextmanager
def _database_unreachable(engine: Engine, ti_id: int) -> Iterator[None]:
    """Heartbeats of ``ti_id`` block, as when the database cannot be reached: SQLite's write
    lock, or PostgreSQL's row lock, held until the block ends."""
    if engine.dialect.name == "sqlite":
        raw = sqlite3.connect(str(engine.url.database), isolation_level=None, timeout=60)
        raw.execute("BEGIN EXCLUSIVE")
        try:
            yield
        finally:
            raw.execute("ROLLBACK")
            raw.close()
        return
    with engine.connect() as conn, conn.begin():
        conn.execute(select(task_instance.c.id).where(task_instance.c.id == ti_id)
                     .with_for_update())
        yield


def test_a_try_the_database_does_not_hear_about_is_killed_within_its_lease(
        engine: Engine, tmp_path: Path) -> None:
    ti_id = _queue_one(engine, tmp_path, "hangs", "forever")
    marks = tmp_path / "marks"
    pool = TaskProcessPool(engine, processes=1, heartbeat_seconds=0.3,
                           start_actor=Actor.WORKER, lease_seconds=1.5)
    pool.start()
    try:
        got = _Collector(1)
        pool.submit([ti_id], fences={ti_id: 0}, on_done=got)
        deadline = time.monotonic() + 30
        while not (marks.exists() and "hangs" in marks.read_text()):
            assert time.monotonic() < deadline, "the try never ran"
            time.sleep(0.05)
        with engine.connect() as conn:
            pid = ti_repo.get(conn, ti_id).pid
        with _database_unreachable(engine, ti_id):
            # The try hangs for ever and nothing but the lease ends it while the database is
            # out of reach: that it dies here at all is the proof; the bound only ends a wait.
            blocked_at = time.monotonic()
            while _alive(pid):
                assert time.monotonic() - blocked_at < 120, "the lease did not kill the try"
                time.sleep(0.05)
        assert got.wait() == ["failed"]
    finally:
        pool.stop()
    with engine.connect() as conn:
        ti = ti_repo.get(conn, ti_id)
    assert (ti.state, ti.state_name, ti.try_number) == ("failed", "Crashed", 1)
    assert "could not reach the database" in ti.state_message


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
