"""Helpers of the REST API tests: store DAGs and create runs through the one door, count rows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import quote

from sqlalchemy import Engine, func, select
from tests.noop import NoopOperator

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.tables import dag_run, state_transition, task_instance
from statewright.sdk import DAG, PythonOperator
from statewright.services.dag_runs import create_run
from statewright.services.dag_view import DagView


def store_dag(engine: Engine, dag: DAG, *, paused: bool = False) -> dict[str, Any]:
    """Store ``dag`` as the DAG processor would; returns its serialized form."""
    serialized = dag.serialize()
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, serialized, now=utcnow())
        dag_repo.set_paused(conn, dag.dag_id, paused)
    return serialized


def chain_dag(dag_id: str, n_tasks: int, **kwargs: Any) -> DAG:
    with DAG(dag_id, **kwargs) as dag:
        previous = None
        for i in range(n_tasks):
            op = NoopOperator(task_id=f"t{i:02d}")
            if previous is not None:
                previous >> op
            previous = op
    return dag


def add_runs(engine: Engine, serialized: dict[str, Any], run_ids: list[str]) -> None:
    """Queued runs (task instances in none), created through the door, one second apart."""
    view = DagView(serialized, dag_repo.dag_hash(serialized))
    start = utcnow()
    with transaction(engine) as conn:
        for i, run_id in enumerate(run_ids):
            create_run(conn, view, now=start + timedelta(seconds=i), actor=Actor.SCHEDULER,
                       run_id=run_id, run_type="scheduled")


def _explode() -> None:
    print("about to read the orders")
    raise ValueError("column 'amount' has 3 null values")


def failing_dag(dag_id: str = "etl") -> DAG:
    """extract (fails on both of its tries) >> load; cleanup (all_done) after extract."""
    with DAG(dag_id, tags=["demo"], description="a failing pipeline") as dag:
        extract = PythonOperator(task_id="extract", python_callable=_explode, retries=1,
                                 retry_delay=timedelta(seconds=0))
        load = NoopOperator(task_id="load")
        cleanup = NoopOperator(task_id="cleanup", trigger_rule="all_done")
        extract >> load
        extract >> cleanup
    return dag


def q(value: str) -> str:
    return quote(value, safe="")


def run_url(dag_id: str, run_id: str) -> str:
    return f"/api/v1/dags/{q(dag_id)}/dagRuns/{q(run_id)}"


def counts(engine: Engine) -> tuple[int, int, int]:
    """(runs, task instances, history rows): to check that nothing changed."""
    with engine.connect() as conn:
        return tuple(  # type: ignore[return-value]
            conn.execute(select(func.count()).select_from(t)).scalar_one()
            for t in (dag_run, task_instance, state_transition))
