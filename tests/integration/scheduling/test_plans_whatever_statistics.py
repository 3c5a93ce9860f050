"""The scheduler's hot reads and writes on PostgreSQL take their index whatever the table's
statistics say.

A big run moves thousands of task instances from ``none`` to ``scheduled`` to ``success`` within
seconds, long before autovacuum refreshes the statistics: the planner then expects thousands of
rows where there are none. Here the statistics are taken while every task instance is ``none``,
then every one moves on, as in a fan-out that has just been scheduled; each statement's plan is
read with ``EXPLAIN``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Engine, event, text
from tests.noop import NoopOperator

from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import pools as pool_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.sdk import DAG
from statewright.services.dag_runs import trigger_dag
from statewright.services.scheduler.capacity import candidates_waiting

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
N = 3000
NEED_WORK = ("none", "up_for_retry", "up_for_reschedule", "failed")
BUSY = ("scheduled", "queued", "running", "deferred", "restarting", "shutdown",
        "awaiting_input")


def _big_run_with_stale_statistics(engine: Engine) -> int:
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO dag (dag_id, is_paused, is_active, serialized, dag_hash, "
            "max_active_runs, max_active_tasks, fail_stop) "
            "VALUES ('big', false, true, '{}', 'h', 16, 100000, false)"))
        run_pk = conn.execute(text(
            "INSERT INTO dag_run (dag_id, run_id, run_type, state, state_name, clear_number) "
            "VALUES ('big', 'r', 'manual', 'running', 'Running', 0) RETURNING id")).scalar_one()
        conn.execute(text(
            "INSERT INTO task_instance (dag_run_id, dag_id, run_id, task_id, map_index, state, "
            "state_name, try_number, max_tries, priority_weight, pool, pool_slots, queue, "
            "poke_count) SELECT :run, 'big', 'r', 't' || g, -1, 'none', 'Pending', 0, 0, 1, "
            "'default_pool', 1, 'default', 0 FROM generate_series(1, :n) AS g"),
            {"run": run_pk, "n": N})
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("ANALYZE task_instance"))  # statistics of a run all in ``none``
    with engine.begin() as conn:  # …which has moved on since (test set-up, not the door)
        conn.execute(text(
            "UPDATE task_instance SET state = CASE WHEN id % 3 = 0 THEN 'success' "
            "ELSE 'scheduled' END WHERE dag_run_id = :run"), {"run": run_pk})
    return int(run_pk)


@contextmanager
def _statements(engine: Engine) -> Iterator[list[tuple[str, Any]]]:
    seen: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        seen.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def _plan(conn: Any, statement: str, parameters: Any) -> str:
    cursor = conn.connection.driver_connection.cursor()
    cursor.execute("EXPLAIN " + statement, parameters)
    return "\n".join(row[0] for row in cursor.fetchall())


def _plan_of(engine: Engine, conn: Any, call: Callable[[], Any], marker: str) -> str:
    with _statements(engine) as seen:
        call()
    statement, parameters = next((s, p) for s, p in seen if marker in s)
    return _plan(conn, statement, parameters)


def test_state_probes_read_the_queue_order_index(pg_engine: Engine) -> None:
    run_pk = _big_run_with_stale_statistics(pg_engine)
    with read_snapshot(pg_engine) as conn:
        # the answers: nothing waits for scheduling, the run is busy
        assert ti_repo.runs_in_states(conn, [run_pk], NEED_WORK) == {}
        assert ti_repo.runs_without_states(conn, [run_pk], BUSY) == set()
        assert ti_repo.runs_in_states(conn, [run_pk], BUSY) == {run_pk: {"scheduled"}}
        plan = _plan_of(pg_engine, conn,
                        lambda: ti_repo.runs_in_states(conn, [run_pk], NEED_WORK), "LATERAL")
    assert "ix_task_instance_queue_order" in plan, plan
    assert "Seq Scan on task_instance" not in plan and "Bitmap" not in plan, plan


def test_a_run_with_nothing_busy_is_found_idle(pg_engine: Engine) -> None:
    run_pk = _big_run_with_stale_statistics(pg_engine)
    with pg_engine.begin() as conn:
        conn.execute(text("UPDATE task_instance SET state = 'success'"))
    with read_snapshot(pg_engine) as conn:
        assert ti_repo.runs_without_states(conn, [run_pk], BUSY) == {run_pk}
        assert ti_repo.runs_in_states(conn, [run_pk], ("success", "none")) == {
            run_pk: {"success"}}


def test_the_doors_compare_and_set_finds_its_rows_by_primary_key(pg_engine: Engine) -> None:
    run_pk = _big_run_with_stale_statistics(pg_engine)
    with pg_engine.connect() as conn:
        ids = list(conn.execute(text(
            "SELECT id FROM task_instance WHERE dag_run_id = :run AND state = 'scheduled' "
            "ORDER BY id LIMIT 8"), {"run": run_pk}).scalars())
    with transaction(pg_engine) as conn:
        plan = _plan_of(pg_engine, conn, lambda: door.set_task_instance_state(
            conn, ids, frm=TI.SCHEDULED, to=TI.QUEUED, actor=Actor.SCHEDULER, now=NOW),
            "UPDATE task_instance")
        queued = conn.execute(text("SELECT count(*) FROM task_instance WHERE state = 'queued'"))
        assert queued.scalar_one() == len(ids)  # the change itself, as before
    assert "pk_task_instance" in plan, plan
    assert "Seq Scan" not in plan and "state_" not in plan.split("pk_task_instance")[0], plan


def test_the_queueing_probe_reads_through_indexes(pg_engine: Engine) -> None:
    _big_run_with_stale_statistics(pg_engine)
    with read_snapshot(pg_engine) as conn:
        assert candidates_waiting(conn) is True
        plan = _plan_of(pg_engine, conn, lambda: candidates_waiting(conn), "first_of_run")
    assert "ix_task_instance_queue_order" in plan, plan
    assert "Seq Scan on task_instance" not in plan, plan


@pytest.mark.parametrize("has_work", [False, True])
def test_an_idle_pass_reads_one_snapshot(pg_harness: Callable, has_work: bool) -> None:
    """A pass with nothing to do opens one read transaction (two round trips on PostgreSQL:
    its ``BEGIN`` and ``COMMIT``), not one per step; with work, the steps' writes follow."""
    h = pg_harness(NOW)
    if has_work:
        with DAG("small") as dag:
            NoopOperator(task_id="a") >> NoopOperator(task_id="b")
        h.sync(dag)
        h.executor.hold = True  # a stays queued: b has work to wait for
        with transaction(h.engine) as conn:
            trigger_dag(conn, "small", now=NOW, actor=Actor.USER, run_id="r")
    h.scheduler.run_once()  # the first pass also creates the default pool and keeps house
    begins: list[int] = []

    def count(_conn: Any) -> None:
        begins.append(1)

    event.listen(h.engine, "begin", count)
    try:
        stats = h.scheduler.run_once(steps=False)
    finally:
        event.remove(h.engine, "begin", count)
    if not has_work:
        assert not stats.did_work
        assert len(begins) == 1
    else:
        h.executor.finish()  # a ends: the next pass schedules and queues b
        event.listen(h.engine, "begin", count)
        try:
            stats = h.scheduler.run_once(steps=False)
        finally:
            event.remove(h.engine, "begin", count)
        assert stats.did_work
        assert len(begins) > 2


def test_one_probe_answers_both_questions(pg_engine: Engine) -> None:
    """``run_probes`` (one statement on PostgreSQL) answers as the two probes it replaces."""
    run_pk = _big_run_with_stale_statistics(pg_engine)
    with pg_engine.begin() as conn:  # one waits for scheduling; the run stays busy
        conn.execute(text("UPDATE task_instance SET state = 'none' WHERE id = "
                          "(SELECT min(id) FROM task_instance WHERE dag_run_id = :run)"),
                     {"run": run_pk})
    for busy in (BUSY, ("deferred",)):
        with read_snapshot(pg_engine) as conn:
            both = ti_repo.run_probes(conn, [run_pk, run_pk + 1], NEED_WORK, busy)
            apart = (ti_repo.runs_in_states(conn, [run_pk, run_pk + 1], NEED_WORK),
                     ti_repo.runs_without_states(conn, [run_pk, run_pk + 1], busy))
        assert both == apart
    assert both == ({run_pk: {"none"}}, {run_pk, run_pk + 1})


def test_the_evaluations_pool_lock_turns_on_index_reads(pg_engine: Engine) -> None:
    """The evaluation queues after ``try_lock_for_queueing``, whose one statement also has the
    rest of its transaction read through indexes (and only that transaction)."""
    with transaction(pg_engine) as conn:
        conn.execute(text("INSERT INTO pool (name, slots, include_deferred) "
                          "VALUES ('default_pool', 128, false)"))
    with transaction(pg_engine) as conn:
        assert conn.execute(text("SHOW enable_seqscan")).scalar_one() == "on"
        assert pool_repo.try_lock_for_queueing(conn) is True
        assert conn.execute(text("SHOW enable_seqscan")).scalar_one() == "off"
        assert conn.execute(text("SHOW enable_bitmapscan")).scalar_one() == "off"
    with pg_engine.connect() as conn:
        assert conn.execute(text("SHOW enable_seqscan")).scalar_one() == "on"


def test_a_runs_active_count_reads_the_busy_not_the_run(pg_engine: Engine) -> None:
    """``max_active_tasks``' count of a run's queued and running task instances reads those
    (at most the executors' slots) through a state index, never the run's rows through the
    unique index ``(dag_run_id, task_id, map_index)`` filtered by state: that read the whole run
    at each queueing pass. The statistics here are those of a table of two small runs, ended,
    taken before a big run came (as after a deployment's first runs): the planner then expects
    one row of the new run, where there are 3,000."""
    from statewright.db.repositories.scheduling import active_by_run

    with pg_engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO dag (dag_id, is_paused, is_active, serialized, dag_hash, "
            "max_active_runs, max_active_tasks, fail_stop) "
            "VALUES ('big', false, true, '{}', 'h', 16, 100000, false)"))
        conn.execute(text(
            "INSERT INTO dag_run (dag_id, run_id, run_type, state, state_name, clear_number) "
            "SELECT 'big', 'small' || g, 'manual', 'success', 'Success', 0 "
            "FROM generate_series(1, 2) AS g"))
        _add_task_instances(conn, "SELECT id FROM dag_run", 8, "'success'")
    with pg_engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("ANALYZE task_instance"))
    with pg_engine.begin() as conn:
        run_pk = conn.execute(text(
            "INSERT INTO dag_run (dag_id, run_id, run_type, state, state_name, clear_number) "
            "VALUES ('big', 'r', 'manual', 'running', 'Running', 0) RETURNING id")).scalar_one()
        _add_task_instances(conn, f"SELECT {int(run_pk)}", N,
                            "CASE WHEN g <= 6 THEN 'queued' WHEN g <= 12 THEN 'running' "
                            "ELSE 'success' END")
    with read_snapshot(pg_engine) as conn:
        assert active_by_run(conn, [run_pk, run_pk + 1]) == {run_pk: 12}
        plan = _plan_of(pg_engine, conn, lambda: active_by_run(conn, [run_pk]), "count(*)")
    assert "uq_task_instance_dag_run_id_task_id_map_index" not in plan, plan
    assert "Seq Scan on task_instance" not in plan, plan


def _add_task_instances(conn: Any, runs: str, n: int, state: str) -> None:
    conn.execute(text(
        "INSERT INTO task_instance (dag_run_id, dag_id, run_id, task_id, map_index, state, "
        "state_name, try_number, max_tries, priority_weight, pool, pool_slots, queue, "
        f"poke_count) SELECT r.id, 'big', 'r' || r.id, 't' || g, -1, {state}, 'Pending', 1, "
        "0, 1, 'default_pool', 1, 'default', 0 "
        f"FROM ({runs}) AS r(id) CROSS JOIN generate_series(1, :n) AS g"), {"n": n})
