"""Task processes are forked when work comes, not all at start, and let go when idle or worn:
an idle deployment holds ``warm_processes`` of them, and a process whose memory grew past
``max_memory_growth_mib`` (or that ran ``max_tries_per_process`` tries) is replaced by a fresh
fork."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import psutil
from sqlalchemy import Engine
from tests.integration.celery.test_task_process_pool_fencing import _queue_one

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import task_instances as ti_repo
from statewright.services.worker.process_pool import Done, TaskProcessPool


def _until(check: Callable[[], bool], timeout: float = 120.0) -> None:
    """Poll ``check``; ``timeout`` only ends a wait for what never happens (a loaded machine
    may take many seconds to start a task process)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def _gone(pid: int) -> bool:
    """The process ended (or is a zombie not yet reaped); it may end while it is asked."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _run_one(pool: TaskProcessPool, ti_id: int) -> Done:
    done: list[Done] = []
    ended = threading.Event()
    pool.submit([ti_id], on_done=lambda d: (done.append(d), ended.set()))
    assert ended.wait(30)
    return done[0]


def test_forked_on_demand_and_retired_when_idle(engine: Engine, tmp_path: Path) -> None:
    ti_id = _queue_one(engine, tmp_path, "fenced", "once")
    pool = TaskProcessPool(engine, processes=3, warm_processes=0, idle_seconds=0.0,
                           heartbeat_seconds=0.2, start_actor=Actor.WORKER)
    pool.start()
    try:
        assert pool._children == []  # nothing forked before there is work
        assert _run_one(pool, ti_id).outcome == "success"
        with transaction(engine) as conn:
            ti = ti_repo.get(conn, ti_id)
        _until(lambda: pool._children == [])
        _until(lambda: _gone(ti.pid))
    finally:
        pool.stop()


def test_a_worn_process_is_replaced_and_warm_ones_stay(engine: Engine, tmp_path: Path) -> None:
    ti_id = _queue_one(engine, tmp_path, "fenced", "once")
    pool = TaskProcessPool(engine, processes=2, warm_processes=1, idle_seconds=3600,
                           max_tries_per_process=1, heartbeat_seconds=0.2,
                           start_actor=Actor.WORKER)
    pool.start()
    try:
        assert len(pool._children) == 1
        first = pool._children[0].process.pid
        assert _run_one(pool, ti_id).outcome == "success"
        with transaction(engine) as conn:
            assert ti_repo.get(conn, ti_id).pid == first
        # The process that ran its one try is let go; the next try gets a fresh fork.
        _until(lambda: all(c.process.pid != first for c in pool._children))
        assert len(pool._children) <= 1
    finally:
        pool.stop()


HOG = '''
from statewright.sdk import DAG, task

KEPT = []

with DAG("hog", schedule=None):
    @task
    def grow():
        KEPT.append(b"x" * (40 * 2**20))  # written, so resident; kept by the process

    grow()
'''


def _queue_hogs(engine: Engine, tmp_path: Path, n: int, source: str = HOG,
                dag_id: str = "hog") -> list[int]:
    from statewright.core.clock import utcnow
    from statewright.core.states import TI
    from statewright.db import transition as door
    from statewright.services.dag_processor import DagProcessor
    from statewright.services.dag_runs import trigger_dag

    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / f"{dag_id}.py").write_text(source)
    DagProcessor(engine, tmp_path / "dags").run_once()
    ids = []
    with transaction(engine) as conn:
        for i in range(n):
            run_pk, _ = trigger_dag(conn, dag_id, now=utcnow(), actor=Actor.USER,
                                    run_id=f"{dag_id}_{i}")
            ti = ti_repo.get_by_key(conn, run_pk, "grow")
            for frm, to in ((TI.NONE, TI.SCHEDULED), (TI.SCHEDULED, TI.QUEUED)):
                door.set_task_instance_state(conn, ti.id, frm=frm, to=to,
                                             actor=Actor.SCHEDULER, now=utcnow())
            ids.append(int(ti.id))
    return ids


def test_a_process_is_retired_when_its_memory_grows_not_after_a_count(
        engine: Engine, tmp_path: Path) -> None:
    """Tries that leave memory behind get the process replaced; a process that keeps its size
    keeps running tries (and keeps its imported DAG file)."""
    first, second, third = _queue_hogs(engine, tmp_path, 3)
    pool = TaskProcessPool(engine, processes=1, warm_processes=1, idle_seconds=3600,
                           max_memory_growth_mib=20, heartbeat_seconds=0.2,
                           start_actor=Actor.WORKER)
    pool.start()
    try:
        pid = pool._children[0].process.pid
        assert _run_one(pool, first).outcome == "success"  # its baseline: one 40 MiB block
        assert pool._children[0].process.pid == pid  # not worn: no count limit by default
        assert _run_one(pool, second).outcome == "success"  # 40 MiB more than its baseline
        _until(lambda: all(c.process.pid != pid for c in pool._children))
        assert _run_one(pool, third).outcome == "success"
        with transaction(engine) as conn:
            assert ti_repo.get(conn, second).pid == pid
            assert ti_repo.get(conn, third).pid != pid
    finally:
        pool.stop()


def test_a_warm_process_that_ran_tries_is_exchanged_for_a_fresh_fork_when_idle(
        engine: Engine, tmp_path: Path) -> None:
    """The warm process kept for the next try holds what its tries imported; once idle past
    ``idle_seconds`` it is exchanged for a fresh fork (which holds only the preloaded modules),
    and a fresh one is kept as it is."""
    ti_id = _queue_one(engine, tmp_path, "fenced", "once")
    pool = TaskProcessPool(engine, processes=2, warm_processes=1, idle_seconds=0.3,
                           heartbeat_seconds=0.1, start_actor=Actor.WORKER)
    pool.start()
    try:
        fresh = pool._children[0].process.pid
        time.sleep(0.5)  # idle past idle_seconds without a try: kept as it is
        pool._poke()
        time.sleep(0.2)
        assert [c.process.pid for c in pool._children] == [fresh]
        assert _run_one(pool, ti_id).outcome == "success"
        _until(lambda: len(pool._children) == 1 and pool._children[0].process.pid != fresh)
        assert pool._children[0].tries == 0
        assert _gone(fresh)
    finally:
        pool.stop()


SLOW_IMPORT = '''
import time
from statewright.sdk import DAG, task

time.sleep(0.4)  # a big DAG file: seconds to import

with DAG("slow_import", schedule=None):
    @task
    def grow():
        return 1

    grow()
'''


def test_a_process_that_paid_for_a_slow_import_is_kept_idle_longer(
        engine: Engine, tmp_path: Path) -> None:
    """``idle_seconds`` lets an idle process go, unless importing its DAG files took long: it
    is kept until at most a thirtieth of its idle time would go to importing them again."""
    (ti_id,) = _queue_hogs(engine, tmp_path, 1, SLOW_IMPORT, "slow_import")
    pool = TaskProcessPool(engine, processes=2, warm_processes=0, idle_seconds=0.0,
                           heartbeat_seconds=0.1, start_actor=Actor.WORKER)
    pool.start()
    try:
        assert _run_one(pool, ti_id).outcome == "success"
        (child,) = pool._children
        assert child.imported >= 0.4
        assert pool._idle_limit(child) >= 12.0
        time.sleep(1.0)
        pool._poke()
        time.sleep(0.2)
        assert pool._children == [child]  # idle past idle_seconds, kept
        child.imported = 0.0  # as if its import had been quick
        _until(lambda: pool._children == [])
    finally:
        pool.stop()
