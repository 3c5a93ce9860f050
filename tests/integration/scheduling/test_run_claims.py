"""Several schedulers on PostgreSQL share the running runs: an evaluation claims the rows of the
runs it evaluates (``FOR NO KEY UPDATE SKIP LOCKED``), and a run another scheduler holds is left
to it for that pass, so no two schedulers weigh the same task instances at once. On SQLite every
running run is claimed."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import run_claims
from statewright.sdk import DAG
from statewright.services.dag_runs import trigger_dag

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _running_runs(h: object, engine: Engine, *dag_ids: str) -> list[int]:
    with DAG(dag_ids[0]) as first:
        NoopOperator(task_id="t")
    others = []
    for dag_id in dag_ids[1:]:
        with DAG(dag_id) as d:
            NoopOperator(task_id="t")
        others.append(d)
    h.sync(first, *others)  # type: ignore[attr-defined]
    pks = []
    with transaction(engine) as conn:
        for dag_id in dag_ids:
            pk, _ = trigger_dag(conn, dag_id, now=NOW, actor=Actor.USER, run_id="r1")
            pks.append(pk)
    h.executor.hold = True  # type: ignore[attr-defined]
    h.scheduler.run_once(steps=False)  # type: ignore[attr-defined]  # starts them
    return pks


def test_a_run_another_transaction_claimed_is_skipped(pg_harness: Callable,
                                                      pg_engine: Engine) -> None:
    h = pg_harness(NOW)
    r1, r2 = _running_runs(h, pg_engine, "one", "two")
    with pg_engine.connect() as a, pg_engine.connect() as b:
        with a.begin(), b.begin():
            assert run_claims.claim_for_evaluation(a, [r1]) == {r1}
            assert run_claims.claim_for_evaluation(b, [r1, r2]) == {r2}
        with b.begin():  # a's transaction ended: its run is free again
            assert run_claims.claim_for_evaluation(b, [r1, r2]) == {r1, r2}


def test_a_scheduler_leaves_a_run_another_is_evaluating(pg_harness: Callable,
                                                        pg_engine: Engine) -> None:
    h = pg_harness(NOW)
    (r1,) = _running_runs(h, pg_engine, "held")
    with pg_engine.connect() as other, other.begin():
        assert run_claims.claim_for_evaluation(other, [r1]) == {r1}  # "the other scheduler"
        h.scheduler.run_once(steps=False)
        assert [t.state for t in h.tis("held")] == ["none"]  # not weighed here
    h.scheduler.run_once(steps=False)
    assert [t.state for t in h.tis("held")] == ["queued"]


def test_only_running_runs_are_claimed(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    (r1,) = _running_runs(h, engine, "ends")
    h.executor.hold = False
    h.loop()
    assert h.runs("ends")[0].state == "success"
    with engine.connect() as conn, conn.begin():
        assert run_claims.claim_for_evaluation(conn, [r1]) == set()
