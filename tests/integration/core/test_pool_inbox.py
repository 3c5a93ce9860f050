"""The local executor's supervisor reads the scheduler's messages in its pool's own thread
(``TaskProcessPool.listen``): a submitted try starts from that thread, a ``check`` is answered in
the same step, and a stop or a closed pipe reaches the supervisor's main thread once. On SQLite
and PostgreSQL."""

from __future__ import annotations

import multiprocessing as mp
import threading
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from tests.integration.celery.test_task_process_pool_fencing import _queue_one

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import task_instances as ti_repo
from statewright.services.executors.local_supervisor import _Inbox, _Relay
from statewright.services.worker.process_pool import Done, TaskProcessPool


class _Recorder:
    def __init__(self, pool: TaskProcessPool) -> None:
        self.pool = pool
        self.messages: list[Any] = []
        self.threads: set[str] = set()
        self.closed = threading.Event()
        self.done: list[Done] = []
        self.ended = threading.Event()

    def on_message(self, message: Any) -> None:
        self.threads.add(threading.current_thread().name)
        self.messages.append(message)
        if message is None:
            self.closed.set()
        elif message[0] == "submit":
            self.pool.submit(message[1], on_done=self._done)

    def _done(self, done: Done) -> None:
        self.done.append(done)
        self.ended.set()


def test_a_try_submitted_through_the_inbox_runs(engine: Engine, tmp_path: Path) -> None:
    ti_id = _queue_one(engine, tmp_path, "fenced", "once")
    ours, theirs = mp.Pipe()
    pool = TaskProcessPool(engine, processes=1, heartbeat_seconds=0.5, start_actor=Actor.WORKER)
    recorder = _Recorder(pool)
    pool.listen(ours, recorder.on_message)
    pool.start()
    try:
        theirs.send(("submit", [ti_id]))
        assert recorder.ended.wait(60)
        assert [d.outcome for d in recorder.done] == ["success"]
        with transaction(engine) as conn:
            assert ti_repo.get(conn, ti_id).state == "success"
        theirs.close()  # the scheduler's side is gone: told once, as None
        assert recorder.closed.wait(30)
        assert recorder.threads == {"task-process-pool"}
        assert recorder.messages == [("submit", [ti_id]), None]
    finally:
        pool.stop()
        ours.close()


class _Pool:
    def __init__(self) -> None:
        self.submitted: list[list[int]] = []
        self.checks = 0

    def submit(self, ids: list[int], *, on_done: Any) -> None:
        self.submitted.append(ids)

    def check_now(self) -> None:
        self.checks += 1


def test_the_inbox_stops_once_with_the_grace_it_was_given() -> None:
    pool = _Pool()
    inbox = _Inbox(pool, _Relay(None))  # type: ignore[arg-type]
    inbox.on_message(("submit", [1, 2]))
    inbox.on_message(("check",))
    assert not inbox.stopping.is_set()
    inbox.on_message(("stop", 7.5))
    inbox.on_message(None)  # the pipe closing after the stop changes nothing
    inbox.on_message(("submit", [3]))  # nor does a late message
    assert inbox.stopping.is_set() and inbox.grace == 7.5
    assert pool.submitted == [[1, 2]] and pool.checks == 1
    plain = _Inbox(_Pool(), _Relay(None))  # type: ignore[arg-type]
    plain.on_message(None)
    assert plain.stopping.is_set() and plain.grace is None
