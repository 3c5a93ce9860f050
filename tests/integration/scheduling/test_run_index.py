"""The scheduler's index of its runs: each evaluation weighs what changed since the last one
(read from the history), the database stays the truth (another writer's change is seen, a
late commit on PostgreSQL too), and a run is read whole when its state may be decided."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import task_instances as ti_repo
from statewright.sdk import DAG, chain
from statewright.services.dag_runs import trigger_dag
from statewright.services.scheduler import evaluation

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


class _Spy:
    """Counts the whole reads of runs and records the candidates of each evaluation."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.whole_reads = 0
        self.candidates: list[set[str]] = []
        for_runs, plan_changed = ti_repo.for_runs, evaluation.plan_changed

        def counting_for_runs(conn: Any, run_ids: Any) -> Any:
            self.whole_reads += 1
            return for_runs(conn, run_ids)

        def recording_plan_changed(candidates: Any, *args: Any, **kwargs: Any) -> Any:
            self.candidates.append(set(candidates))
            return plan_changed(candidates, *args, **kwargs)

        monkeypatch.setattr(ti_repo, "for_runs", counting_for_runs)
        monkeypatch.setattr(evaluation, "plan_changed", recording_plan_changed)


def _trigger(engine: Engine, dag_id: str) -> None:
    with transaction(engine) as conn:
        trigger_dag(conn, dag_id, now=NOW, actor=Actor.USER, run_id="r1")


def _first_tries_queued(h: Any, engine: Engine, dag: DAG) -> None:
    """The DAG synced and triggered; two passes: the run started, then read whole and its
    first task instances queued (the executor holds them until ``finish``)."""
    h.sync(dag)
    _trigger(engine, dag.dag_id)
    h.executor.hold = True
    h.scheduler.run_once(steps=False)
    h.scheduler.run_once(steps=False)


def _states(h: Any, dag_id: str) -> dict[str, str]:
    return {t.task_id: t.state for t in h.tis(dag_id)}


def test_a_chain_link_weighs_only_what_changed(harness: Callable, engine: Engine,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    h = harness(NOW)
    with DAG("long") as dag:
        chain(*[NoopOperator(task_id=f"t{i:02}") for i in range(40)])
    spy = _Spy(monkeypatch)
    _first_tries_queued(h, engine, dag)  # read whole: t00 scheduled and queued
    assert spy.whole_reads == 1
    for i in range(1, 40):
        h.executor.finish()
        h.scheduler.run_once(steps=False)
        assert _states(h, "long")[f"t{i:02}"] == "queued"
    # 39 links, none read the run whole; each weighed the link that ended and the next one
    assert spy.whole_reads == 1
    assert all(len(c) <= 3 for c in spy.candidates) and len(spy.candidates) == 39
    h.executor.finish()
    h.scheduler.run_once(steps=False)  # the last one ended: read whole, then decided
    assert spy.whole_reads == 2
    assert h.runs("long")[0].state == "success"


def test_another_writers_change_is_weighed(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    with DAG("marked") as dag:
        NoopOperator(task_id="a") >> NoopOperator(task_id="b") >> NoopOperator(task_id="c")
    _first_tries_queued(h, engine, dag)  # a queued
    a = next(t for t in h.tis("marked") if t.task_id == "a")
    with transaction(engine) as conn:  # a person marks it failed
        door.set_task_instance_state(conn, a.id, frm=TI.QUEUED, to=TI.FAILED, actor=Actor.USER,
                                     now=NOW)
    h.executor.held.clear()
    h.scheduler.run_once(steps=False)
    assert _states(h, "marked") == {"a": "failed", "b": "upstream_failed",
                                    "c": "upstream_failed"}
    assert h.runs("marked")[0].state == "failed"


def test_a_failed_evaluation_reads_every_run_whole_again(
        harness: Callable, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    h = harness(NOW)
    with DAG("broken_pass") as dag:
        NoopOperator(task_id="a") >> NoopOperator(task_id="b")
    _first_tries_queued(h, engine, dag)  # a queued; the run is in the index
    assert h.scheduler.index.entries
    h.executor.finish()  # a succeeds: the next evaluation takes its history row

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the evaluation broke")

    with monkeypatch.context() as m:
        m.setattr("statewright.services.scheduler.scheduler.schedule_run", fail)
        with pytest.raises(RuntimeError):
            h.scheduler.run_once(steps=False)
    assert not h.scheduler.index.entries and h.scheduler.index.cursor is None
    h.scheduler.run_once(steps=False)  # a's success is not lost with the failed pass
    assert _states(h, "broken_pass")["b"] == "queued"


def test_more_changes_than_the_runs_hold_start_the_reading_again(
        harness: Callable, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    h = harness(NOW)
    with DAG("busy") as dag:
        [NoopOperator(task_id=f"w{i}") for i in range(6)] >> NoopOperator(task_id="end")
    _first_tries_queued(h, engine, dag)  # w0..w5 queued
    spy = _Spy(monkeypatch)
    # 6 task instances queued, started and ended: 18 history rows, past twice the 7 it holds
    h.scheduler.index.min_read = 3
    h.executor.finish()
    h.scheduler.run_once(steps=False)
    assert spy.whole_reads >= 1 and not spy.candidates  # read whole, weighed whole
    assert _states(h, "busy")["end"] == "queued"


def test_every_run_is_read_whole_now_and_then(harness: Callable, engine: Engine,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    h = harness(NOW)
    with DAG("periodic") as dag:
        NoopOperator(task_id="a") >> NoopOperator(task_id="b") >> NoopOperator(task_id="c")
    ticks = [0.0]
    h.scheduler.index.clock = lambda: ticks[0]
    _first_tries_queued(h, engine, dag)  # read whole at 0
    spy = _Spy(monkeypatch)
    h.executor.finish()
    ticks[0] = h.scheduler.index.full_every - 1
    h.scheduler.run_once(steps=False)
    assert spy.whole_reads == 0
    h.executor.finish()
    ticks[0] = h.scheduler.index.full_every
    h.scheduler.run_once(steps=False)
    assert spy.whole_reads == 1 and _states(h, "periodic")["c"] == "queued"


def _finish_in_open_transaction(engine: Engine, ti_id: int, committed: threading.Event,
                                release: threading.Event) -> threading.Thread:
    """A try that ends in a transaction which takes its history ids now and commits only when
    ``release`` is set (as a slow worker's would)."""
    def work() -> None:
        with transaction(engine) as conn:
            door.set_task_instance_state(conn, ti_id, frm=TI.QUEUED, to=TI.RUNNING,
                                         actor=Actor.WORKER, now=NOW, increment_try=True)
            door.set_task_instance_state(conn, ti_id, frm=TI.RUNNING, to=TI.SUCCESS,
                                         actor=Actor.WORKER, now=NOW)
            committed.set()  # not yet: the ids are taken
            release.wait(10)

    thread = threading.Thread(target=work)
    thread.start()
    return thread


def _a_to_b_and_x_queued(h: Any, engine: Engine, dag_id: str) -> dict[str, int]:
    """``a >> b`` and ``x``: a and x queued, the executor holding x alone (a is ended by the
    test). Returns the task instances' ids."""
    with DAG(dag_id) as dag:
        NoopOperator(task_id="a") >> NoopOperator(task_id="b")
        NoopOperator(task_id="x")
    _first_tries_queued(h, engine, dag)
    ids = {t.task_id: t.id for t in h.tis(dag_id)}
    h.executor.held = [ids["x"]]
    return ids


def test_a_late_commit_on_postgresql_is_not_missed(pg_harness: Callable, pg_engine: Engine
                                                   ) -> None:
    h = pg_harness(NOW)
    ids = _a_to_b_and_x_queued(h, pg_engine, "late")
    taken, release = threading.Event(), threading.Event()
    slow = _finish_in_open_transaction(pg_engine, ids["a"], taken, release)
    try:
        assert taken.wait(10)
        h.executor.finish()  # x ends and commits, with history ids above a's
        h.scheduler.run_once(steps=False)  # reads past a's ids, which are not committed
        assert _states(h, "late")["b"] == "none"
        assert h.scheduler.index.gaps
    finally:
        release.set()
        slow.join()
    h.scheduler.run_once(steps=False)
    assert _states(h, "late")["b"] == "queued"
    assert not h.scheduler.index.gaps


def test_a_gap_that_never_fills_reads_every_run_whole(pg_harness: Callable, pg_engine: Engine
                                                      ) -> None:
    h = pg_harness(NOW)
    ticks = [0.0]
    index = h.scheduler.index
    index.clock = lambda: ticks[0]
    ids = _a_to_b_and_x_queued(h, pg_engine, "rolled_back")
    with pytest.raises(RuntimeError), transaction(pg_engine) as conn:  # takes ids, rolls back
        door.set_task_instance_state(conn, ids["a"], frm=TI.QUEUED, to=TI.RUNNING,
                                     actor=Actor.WORKER, now=NOW, increment_try=True)
        raise RuntimeError("the worker's transaction fails")
    h.executor.finish()  # x: ids above the rolled-back one
    h.scheduler.run_once(steps=False)
    assert index.gaps and index.entries
    ticks[0] = index.gap_ttl
    h.scheduler.run_once(steps=False)
    assert not index.gaps
    assert [e.read_at for e in index.entries.values()] == [index.gap_ttl]  # read whole
    assert _states(h, "rolled_back")["a"] == "queued"  # the rolled-back change never happened
