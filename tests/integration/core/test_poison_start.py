"""A task instance whose try cannot start (its DAG's stored form cannot be read) ends failed,
with the error as its message, and does not hold back the tries it was batched with: before,
the pool step's one transaction failed on every pass and every task instance in the batch
stayed queued forever. A passing database error still leaves the whole batch queued, to be
started on a later pass. On SQLite and PostgreSQL."""

from __future__ import annotations

import textwrap
import threading
from pathlib import Path

import pytest
from sqlalchemy import Engine, select, update

from statewright.core.clock import utcnow
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.tables import dag, state_transition
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.worker import step_parts
from statewright.services.worker.process_pool import START_FAILED, Done, TaskProcessPool

DAGS = textwrap.dedent('''
    from statewright.sdk import DAG, task

    for name in ("good", "bad"):
        with DAG(name):
            @task
            def once():
                return 1

            once()
''')


def _queue(engine: Engine, dag_id: str) -> int:
    now = utcnow()
    with transaction(engine) as conn:
        run_pk, _ = trigger_dag(conn, dag_id, now=now, actor=Actor.USER)
        ti = ti_repo.get_by_key(conn, run_pk, "once")
        for frm, to in ((TI.NONE, TI.SCHEDULED), (TI.SCHEDULED, TI.QUEUED)):
            door.set_task_instance_state(conn, ti.id, frm=frm, to=to, actor=Actor.SCHEDULER,
                                         now=now)
    return int(ti.id)


def _submit_together(engine: Engine, ids: list[int]) -> dict[int, Done]:
    """Submit ``ids`` in one call to a pool of two task processes (one pool step starts them
    both); how each submission ended."""
    done: dict[int, Done] = {}
    ended = threading.Event()

    def on_done(d: Done) -> None:
        done[d.ti_id] = d
        if len(done) == len(ids):
            ended.set()

    pool = TaskProcessPool(engine, processes=2, heartbeat_seconds=0.5, start_actor=Actor.WORKER)
    pool.start()
    try:
        pool.submit(ids, on_done=on_done)
        assert ended.wait(60), done
    finally:
        pool.stop()
    return done


@pytest.fixture
def two_queued(engine: Engine, tmp_path: Path) -> tuple[int, int]:
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "two.py").write_text(DAGS)
    DagProcessor(engine, tmp_path / "dags").run_once()
    good, bad = _queue(engine, "good"), _queue(engine, "bad")
    with transaction(engine) as conn:  # a stored form this version cannot read
        conn.execute(update(dag).where(dag.c.dag_id == "bad").values(
            serialized={"tasks": "not a list"}, dag_hash="unreadable"))
    return good, bad


def test_one_unstartable_try_fails_alone(engine: Engine, two_queued: tuple[int, int]) -> None:
    good, bad = two_queued
    done = _submit_together(engine, [good, bad])
    assert done[good].outcome == "success"
    assert done[bad].outcome == "failed"
    with engine.connect() as conn:
        assert ti_repo.get(conn, good).state == TI.SUCCESS
        row = ti_repo.get(conn, bad)
        assert (row.state, row.try_number) == (TI.FAILED, 0)  # no try started, none to retry
        last = conn.execute(select(state_transition).where(
            state_transition.c.entity == "task_instance", state_transition.c.entity_id == bad)
            .order_by(state_transition.c.id.desc()).limit(1)).one()
    assert (last.from_state, last.to_state, last.actor) == ("queued", "failed", "worker")
    assert last.message.startswith("the try could not start: ")


def test_a_passing_database_error_leaves_the_batch_queued(
        engine: Engine, two_queued: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """An error the database may not give again (here: the server unreachable) ends nothing:
    every submission is told its start failed, and both stay queued for a later pass."""
    from sqlalchemy.exc import OperationalError

    good, bad = two_queued
    real = TaskProcessPool._write
    calls: list[int] = []

    def unreachable(self: TaskProcessPool, *args: object) -> step_parts.Written:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("SELECT 1", {}, ConnectionError("server closed"))
        return real(self, *args)

    monkeypatch.setattr(TaskProcessPool, "_write", unreachable)
    done = _submit_together(engine, [good, bad])
    assert {d.outcome for d in done.values()} == {START_FAILED}
    with engine.connect() as conn:
        assert [ti_repo.get(conn, i).state for i in (good, bad)] == [TI.QUEUED, TI.QUEUED]
