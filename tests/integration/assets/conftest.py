"""Fixtures of the asset and cross-DAG tests: DAGs synced through the DAG processor's sync
path, the real scheduler with its scheduling steps and the in-process executor running the real
tasks, on a manual clock (nothing sleeps)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Engine, select

from statewright.core.clock import ManualClock
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import asset_events as event_repo
from statewright.db.repositories import dags as dag_repo
from statewright.db.tables import dag_run, task_instance
from statewright.services.dag_processor.importer import ImportOutcome
from statewright.services.dag_processor.sync import FileSync
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.inprocess import InProcessExecutor
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig
from statewright.services.scheduler.steps import scheduling_steps

FOLDER = "/virtual/dags/"


class AssetHarness:
    def __init__(self, engine: Engine, start: datetime) -> None:
        self.engine = engine
        self.clock = ManualClock(start)
        self.views = DagViewCache()
        self.executor = InProcessExecutor(engine, clock=self.clock, views=self.views)
        self.dags: dict[str, Any] = self.executor.dags
        self.scheduler = self.new_scheduler()

    def new_scheduler(self) -> Scheduler:
        return Scheduler(self.engine, self.executor, clock=self.clock, views=self.views,
                         config=SchedulerConfig(idle_seconds=0.0),
                         extra_steps=scheduling_steps())

    def sync(self, *dags: Any, fileloc: str = FOLDER + "dags.py") -> Any:
        for d in dags:
            self.dags[d.dag_id] = d
        outcome = ImportOutcome(fileloc, dags=[d.serialize() for d in dags])
        with transaction(self.engine) as conn:
            result = FileSync(conn, now=self.clock(), folder_prefix=FOLDER,
                              present_files={fileloc}, paused_at_creation=False
                              ).file(fileloc, outcome, mtime=0.0, size=0, content_hash="x")
        assert result.error is None, result.error
        return result

    def trigger(self, dag_id: str) -> str:
        with transaction(self.engine) as conn:
            return trigger_dag(conn, dag_id, now=self.clock(), actor=Actor.USER)[1]

    def loop(self, times: int = 200) -> None:
        for _ in range(times):
            self.clock.advance(1)
            if not self.scheduler.run_once().did_work:
                return
        raise AssertionError(f"the scheduler still had work after {times} loops")

    def runs(self, dag_id: str, run_type: str | None = None) -> list[Any]:
        stmt = select(dag_run).where(dag_run.c.dag_id == dag_id).order_by(dag_run.c.id)
        if run_type:
            stmt = stmt.where(dag_run.c.run_type == run_type)
        with self.engine.connect() as conn:
            return list(conn.execute(stmt).all())

    def tis(self, dag_id: str) -> list[Any]:
        with self.engine.connect() as conn:
            return list(conn.execute(select(task_instance).where(
                task_instance.c.dag_id == dag_id).order_by(task_instance.c.id)).all())

    def events(self, asset_name: str | None = None) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            return list(reversed(event_repo.list_events(conn, asset_name=asset_name,
                                                        limit=10000)))

    def triggering(self, run_pk: int) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            return event_repo.triggering_events(conn, [run_pk]).get(run_pk, [])

    def dag_row(self, dag_id: str) -> Any:
        with self.engine.connect() as conn:
            return dag_repo.get_dag(conn, dag_id)


@pytest.fixture
def assets_harness(engine: Engine) -> Callable[..., AssetHarness]:
    def make(start: datetime = datetime(2026, 1, 1, tzinfo=UTC)) -> AssetHarness:
        return AssetHarness(engine, start)

    return make
