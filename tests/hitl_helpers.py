"""Driving a DAG with tasks awaiting input: a scheduler and the in-process executor, stepped
by hand with an injected clock (no sleeping for scheduling)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import xcoms as xcom_repo
from statewright.services.dag_runs import create_run
from statewright.services.dag_view import DagView, DagViewCache
from statewright.services.executors.inprocess import InProcessExecutor
from statewright.services.scheduler.hitl_timeouts import HITLTimeouts
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig

START = datetime(2026, 6, 1, 12, tzinfo=UTC)


@dataclass
class Clock:
    now: datetime = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> None:
        self.now += timedelta(**kwargs)


@dataclass
class Driven:
    engine: Engine
    dag: Any
    scheduler: Scheduler
    run_pk: int
    run_id: str
    clock: Clock = field(default_factory=Clock)

    def settle(self, passes: int = 60) -> None:
        """Scheduler passes until nothing changes."""
        for _ in range(passes):
            if not self.scheduler.run_once().did_work:
                return

    def states(self) -> dict[str, str]:
        with self.engine.connect() as conn:
            return {t.task_id: t.state for t in ti_repo.by_run(conn, self.run_pk)}

    def run_state(self) -> str:
        with self.engine.connect() as conn:
            return str(run_repo.get(conn, self.run_pk).state)

    def value(self, task_id: str) -> Any:
        with self.engine.connect() as conn:
            got = xcom_repo.get_indexed_return_values(conn, [(self.run_pk, task_id)])
        return got.get((self.run_pk, task_id), {}).get(-1)

    def ti(self, task_id: str) -> Any:
        with self.engine.connect() as conn:
            return next(t for t in ti_repo.by_run(conn, self.run_pk) if t.task_id == task_id)


def drive(engine: Engine, dag: Any, tmp_path: Path, clock: Clock | None = None) -> Driven:
    clock = clock or Clock()
    serialized = dag.serialize()
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, serialized, now=clock())
        dag_repo.set_paused(conn, dag.dag_id, False)
        view = DagView(serialized, dag_repo.dag_hash(serialized))
        run_pk = create_run(conn, view, now=clock(), actor=Actor.USER, logical_date=clock())
        run_id = run_repo.get(conn, run_pk).run_id
    views = DagViewCache()
    executor = InProcessExecutor(engine, dags={dag.dag_id: dag}, clock=clock, views=views,
                                 logs_folder=tmp_path / "logs")
    scheduler = Scheduler(engine, executor, clock=clock, views=views,
                          config=SchedulerConfig(idle_seconds=0.0,
                                                 only_runs=frozenset({run_pk})),
                          extra_steps=[HITLTimeouts()])
    return Driven(engine, dag, scheduler, run_pk, run_id, clock)
