"""The task process pool that Celery workers run tries in: fenced starts, duplicates in one batch,
and the outcome each submitter is told. On SQLite and PostgreSQL, without a broker."""

from __future__ import annotations

import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.worker.process_pool import NOT_STARTED, Done, TaskProcessPool

DAG = textwrap.dedent('''
    from statewright.sdk import DAG, task

    with DAG("fenced"):
        @task
        def once():
            with open(MARKS, "a") as fh:
                fh.write("ran\\n")
            return 1

        once()
''')


@pytest.fixture
def queued(engine: Engine, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A task instance queued at try 0, and a started pool of two task processes."""
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "fenced.py").write_text(
        DAG.replace("MARKS", repr(str(tmp_path / "marks"))))
    DagProcessor(engine, tmp_path / "dags").run_once()
    now = utcnow()
    with transaction(engine) as conn:
        run_pk, _ = trigger_dag(conn, "fenced", now=now, actor=Actor.USER)
        ti = ti_repo.get_by_key(conn, run_pk, "once")
        for frm, to in ((TI.NONE, TI.SCHEDULED), (TI.SCHEDULED, TI.QUEUED)):
            door.set_task_instance_state(conn, ti.id, frm=frm, to=to, actor=Actor.SCHEDULER,
                                         now=now)
    pool = TaskProcessPool(engine, processes=2, heartbeat_seconds=0.5,
                           start_actor=Actor.WORKER)
    pool.start()
    try:
        yield {"engine": engine, "pool": pool, "ti_id": ti.id, "marks": tmp_path / "marks"}
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
