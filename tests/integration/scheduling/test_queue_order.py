"""The queueing candidates, read per run from an index: the same order as one global sort
(priority first, then the run with the earlier logical date, then the older row)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, select, update
from tests.noop import NoopOperator

from statewright.core.states import RUN
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import scheduling as sched_repo
from statewright.db.tables import dag_run, task_instance
from statewright.sdk import DAG
from statewright.services.dag_runs import trigger_dag

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
ti = task_instance.c


def _scheduled_runs(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    with DAG("order") as dag:
        for i, weight in enumerate((1, 5, 5, 9)):
            NoopOperator(task_id=f"t{i}", priority_weight=weight, weight_rule="absolute",
                          pool="other" if i == 3 else "default_pool")
    h.sync(dag)
    with transaction(engine) as conn:
        # "late" is triggered first but has the later logical date
        trigger_dag(conn, "order", now=NOW, actor=Actor.USER, run_id="late",
                    logical_date=NOW + timedelta(days=1))
        trigger_dag(conn, "order", now=NOW, actor=Actor.USER, run_id="early",
                    logical_date=NOW)
        runs = conn.execute(select(dag_run.c.id)).scalars().all()
        door.set_dag_run_state(conn, list(runs), frm=RUN.QUEUED, to=RUN.RUNNING,
                               actor=Actor.SCHEDULER, now=NOW)
        # straight to scheduled: this test reads the queue, it does not schedule
        conn.execute(update(task_instance).values(state="scheduled"))


def _order(engine: Engine, limit: int, **skip: object) -> list[tuple[str, str]]:
    with engine.connect() as conn:
        rows = sched_repo.queue_candidates(conn, limit, **skip)  # type: ignore[arg-type]
    return [(r.run_id, r.task_id) for r in rows]


def test_priority_then_earlier_logical_date_then_row(harness: Callable,
                                                     engine: Engine) -> None:
    _scheduled_runs(harness, engine)
    assert _order(engine, 100) == [
        ("early", "t3"), ("late", "t3"), ("early", "t1"), ("early", "t2"),
        ("late", "t1"), ("late", "t2"), ("early", "t0"), ("late", "t0")]
    assert _order(engine, 3) == [("early", "t3"), ("late", "t3"), ("early", "t1")]


def test_filters_leave_out_pools_runs_and_tasks(harness: Callable, engine: Engine) -> None:
    _scheduled_runs(harness, engine)
    with engine.connect() as conn:
        early = conn.execute(select(dag_run.c.id).where(dag_run.c.run_id == "early")).scalar()
    assert _order(engine, 3, skip_pools={"other"}) == [
        ("early", "t1"), ("early", "t2"), ("late", "t1")]
    assert _order(engine, 2, skip_runs={early}, skip_tasks={("order", "t3")}) == [
        ("late", "t1"), ("late", "t2")]
