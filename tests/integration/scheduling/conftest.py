"""Fixtures of the scheduling tests: DAGs synced through the DAG processor's sync path, the
real scheduler with the scheduling steps, and an executor that finishes tasks at once, all on a
manual clock (nothing sleeps)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from tests.cli_helpers import cli_uses_engine

from statewright.core.clock import ManualClock
from statewright.core.states import RUN, TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.tables import dag_run, task_instance
from statewright.services.dag_processor.importer import ImportOutcome
from statewright.services.dag_processor.sync import FileSync
from statewright.services.dag_view import DagViewCache
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig
from statewright.services.scheduler.steps import scheduling_steps

FOLDER = "/virtual/dags/"


class InstantExecutor:
    """Queued task instances start and end at once: success, unless ``outcomes`` says failed.

    With ``hold=True`` they stay queued until ``finish()``.
    """

    def __init__(self, engine: Engine, clock: ManualClock, slots: int = 1000) -> None:
        self.engine = engine
        self.clock = clock
        self.slots = slots
        self.outcomes: dict[str, str] = {}  # task_id → "failed"
        self.hold = False
        self.held: list[int] = []
        self.queued_log: list[list[int]] = []

    def slots_available(self) -> int:
        return self.slots

    def queue_workloads(self, ti_ids: Sequence[int]) -> None:
        self.queued_log.append(list(ti_ids))
        if self.hold:
            self.held += list(ti_ids)
            return
        self._finish(ti_ids)

    def finish(self) -> None:
        ids, self.held = self.held, []
        self._finish(ids)

    def _finish(self, ti_ids: Sequence[int]) -> None:
        if not ti_ids:
            return
        now = self.clock()
        with transaction(self.engine) as conn:
            door.set_task_instance_state(conn, list(ti_ids), frm=TI.QUEUED, to=TI.RUNNING,
                                         actor=Actor.WORKER, now=now, increment_try=True)
            rows = conn.execute(select(task_instance.c.id, task_instance.c.task_id)
                                .where(task_instance.c.id.in_(list(ti_ids)))).all()
            failed = [r.id for r in rows if self.outcomes.get(r.task_id) == "failed"]
            ok = [r.id for r in rows if r.id not in set(failed)]
            door.set_task_instance_state(conn, ok, frm=TI.RUNNING, to=TI.SUCCESS,
                                         actor=Actor.WORKER, now=now)
            door.set_task_instance_state(conn, failed, frm=TI.RUNNING, to=TI.FAILED,
                                         actor=Actor.WORKER, now=now)


class Harness:
    def __init__(self, engine: Engine, start: datetime) -> None:
        self.engine = engine
        self.clock = ManualClock(start)
        self.views = DagViewCache()
        self.executor = InstantExecutor(engine, self.clock)
        self.scheduler = Scheduler(engine, self.executor, clock=self.clock, views=self.views,
                                   config=SchedulerConfig(idle_seconds=0.0),
                                   extra_steps=scheduling_steps())

    def sync(self, *dags: Any, fileloc: str = FOLDER + "dags.py", paused: bool = False,
             paused_at_creation: bool = False) -> Any:
        """Sync DAG objects as the DAG processor would have from ``fileloc``."""
        outcome = ImportOutcome(fileloc, dags=[d.serialize() for d in dags])
        with transaction(self.engine) as conn:
            result = FileSync(conn, now=self.clock(), folder_prefix=FOLDER,
                              present_files={fileloc}, paused_at_creation=paused_at_creation
                              ).file(fileloc, outcome, mtime=0.0, size=0, content_hash="x")
            for d in dags:
                if not paused_at_creation:
                    dag_repo.set_paused(conn, d.dag_id, paused)
        return result

    def loop(self, times: int = 200) -> int:
        """Scheduler loops until nothing happens; returns how many loops did work."""
        worked = 0
        for _ in range(times):
            if not self.scheduler.run_once().did_work:
                return worked
            worked += 1
        raise AssertionError(f"the scheduler still had work after {times} loops")

    def runs(self, dag_id: str, run_type: str | None = None) -> list[Any]:
        stmt = select(dag_run).where(dag_run.c.dag_id == dag_id).order_by(dag_run.c.logical_date,
                                                                          dag_run.c.id)
        if run_type:
            stmt = stmt.where(dag_run.c.run_type == run_type)
        with self.engine.connect() as conn:
            return list(conn.execute(stmt).all())

    def dag_row(self, dag_id: str) -> Any:
        with self.engine.connect() as conn:
            return dag_repo.get_dag(conn, dag_id)

    def tis(self, dag_id: str) -> list[Any]:
        with self.engine.connect() as conn:
            return list(conn.execute(
                select(task_instance).where(task_instance.c.dag_id == dag_id)
                .order_by(task_instance.c.id)).all())

    def count_runs(self, dag_id: str, state: RUN) -> int:
        return sum(1 for r in self.runs(dag_id) if r.state == state.value)


@pytest.fixture
def harness(engine: Engine) -> Callable[[datetime], Harness]:
    def make(start: datetime = datetime(2026, 1, 1, tzinfo=UTC)) -> Harness:
        return Harness(engine, start)

    return make


@pytest.fixture
def pg_harness(pg_engine: Engine) -> Callable[[datetime], Harness]:
    def make(start: datetime = datetime(2026, 1, 1, tzinfo=UTC)) -> Harness:
        return Harness(pg_engine, start)

    return make


@pytest.fixture
def cli_env(tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The CLI on the test's database (its engine is shared, not a new one per command)."""
    cli_uses_engine(monkeypatch, engine)
    dags = tmp_path / "dags"
    dags.mkdir()
    return {"STATEWRIGHT_HOME": str(tmp_path / "home"), "STATEWRIGHT_DAGS_FOLDER": str(dags),
            "STATEWRIGHT_DATABASE_URL": "sqlite:///unused",
            "STATEWRIGHT_DAG_FILE_PROCESSOR_TIMEOUT": "5"}
