"""Task processes are forked when work comes, not all at start, and let go when idle or worn:
an idle deployment holds ``warm_processes`` of them, and a process that ran
``max_tries_per_process`` tries is replaced by a fresh fork."""

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


def _until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


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
        _until(lambda: not psutil.pid_exists(ti.pid)
               or psutil.Process(ti.pid).status() == psutil.STATUS_ZOMBIE)
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
