"""The round trips of a pass that only queues, on PostgreSQL: the probe's first statement also
turns the index reads on, the critical section's pool lock also returns the pool rows and turns
them on, the running runs come with their DAGs' hashes, and the queueing choice takes the DAG
views the probe read. Each is one statement fewer per pass; the queueing itself is
unchanged."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Engine, event, text
from tests.noop import NoopOperator

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.sdk import DAG
from statewright.services.dag_runs import trigger_dag

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


@pytest.fixture
def statements(pg_engine: Engine) -> Iterator[list[str]]:
    seen: list[str] = []

    def _count(_conn: Any, _cursor: Any, stmt: str, *_args: Any) -> None:
        seen.append(" ".join(stmt.split()))

    event.listen(pg_engine, "before_cursor_execute", _count)
    yield seen
    event.remove(pg_engine, "before_cursor_execute", _count)


def test_a_queueing_pass_reads_pools_hashes_and_settings_once(
        pg_harness: Callable, pg_engine: Engine, statements: list[str]) -> None:
    h = pg_harness(NOW)
    with DAG("fan", max_active_tasks=100) as d:
        for i in range(10):
            NoopOperator(task_id=f"t{i}")
    h.sync(d)
    with transaction(pg_engine) as conn:
        trigger_dag(conn, "fan", now=NOW, actor=Actor.USER, run_id="r1")
    h.executor.hold = True
    h.executor.slots = 3
    h.scheduler.run_once(steps=False)  # starts the run
    h.scheduler.run_once(steps=False)  # schedules 10; queues 3, and 3 more
    statements.clear()
    stats = h.scheduler.run_once(steps=False)  # nothing to evaluate: the critical section
    assert stats.queued == 3
    assert sum(1 for s in h.tis("fan") if s.state == "queued") == 9
    pools = [s for s in statements if "FROM pool" in s]
    assert len(pools) == 1 and "FOR UPDATE" in pools[0] and "set_config" in pools[0]
    # The DAGs' hashes come with the running runs, in one statement; none are read apart.
    assert not [s for s in statements if s.startswith("SELECT dag.dag_id, dag.dag_hash")]
    assert sum(1 for s in statements if "FROM dag_run" in s and "AS dag_hash" in s) == 1
    assert not [s for s in statements if s.startswith("SELECT set_config")]
    assert "set_config" in statements[0]  # the probe's first statement


def test_the_critical_section_still_holds_every_pool_row(
        pg_harness: Callable, pg_engine: Engine) -> None:
    from statewright.db.repositories import pools as pool_repo

    pg_harness(NOW)
    with transaction(pg_engine) as conn:
        pool_repo.ensure_default(conn)
        pool_repo.set_pool(conn, "other", 4)
    with transaction(pg_engine) as conn:
        rows = pool_repo.lock_for_queueing(conn)
        assert rows is not None and {r.name for r in rows} == {"default_pool", "other"}
        with pg_engine.connect() as other:
            free = other.execute(text(
                "SELECT name FROM pool FOR UPDATE SKIP LOCKED")).scalars().all()
            other.rollback()
        assert free == []
        assert conn.execute(text("SHOW enable_seqscan")).scalar() == "off"


def test_an_idle_pass_without_running_runs_reads_no_queue_candidates(
        pg_harness: Callable, statements: list[str]) -> None:
    h = pg_harness(NOW)
    h.scheduler.run_once()  # the first pass also reaps (housekeeping)
    statements.clear()
    assert not h.scheduler.run_once().did_work
    assert not [s for s in statements if "first_of_run" in s]
    assert len(statements) == 2  # the steps and queued runs; the running runs
