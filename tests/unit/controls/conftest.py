"""Fixtures of the control tests: a run driven by the real scheduler and the in-process executor
on a manual clock, and a checker that every recorded transition is an allowed edge."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Engine, insert, select

from statewright.core.clock import ManualClock
from statewright.core.states import TI
from statewright.core.transitions import Actor, dag_run_edge, task_instance_edge
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.db.tables import state_transition, trigger
from statewright.services.dag_runs import create_run
from statewright.services.dag_view import DagView, DagViewCache
from statewright.services.executors.inprocess import InProcessExecutor
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class Harness:
    """One DAG, its runs, the scheduler and the in-process executor, on a manual clock."""

    def __init__(self, engine: Engine, dag: Any) -> None:
        self.engine = engine
        self.dag = dag
        self.clock = ManualClock(T0)
        self.serialized = dag.serialize()
        with transaction(engine) as conn:
            dag_repo.upsert_dag(conn, self.serialized, now=self.clock())
            dag_repo.set_paused(conn, dag.dag_id, False)
        self.view = DagView(self.serialized, dag_repo.dag_hash(self.serialized))
        views = DagViewCache()
        self.executor = InProcessExecutor(engine, dags={dag.dag_id: dag}, clock=self.clock,
                                          views=views)
        self.scheduler = Scheduler(engine, self.executor, clock=self.clock, views=views,
                                   config=SchedulerConfig(idle_seconds=0.0))
        self.run_id = "r1"

    def new_run(self, run_id: str = "r1") -> str:
        with transaction(self.engine) as conn:
            create_run(conn, self.view, now=self.clock(), actor=Actor.USER, run_id=run_id)
        self.run_id = run_id
        return run_id

    def loop(self, times: int = 50) -> None:
        """Scheduler loops until nothing happens (or ``times`` loops)."""
        for _ in range(times):
            self.clock.advance(0.001)
            if not self.scheduler.run_once().did_work:
                return

    def run(self, run_id: str | None = None) -> Any:
        with self.engine.connect() as conn:
            return run_repo.get_by_run_id(conn, self.dag.dag_id, run_id or self.run_id)

    def tis(self, run_id: str | None = None) -> dict[str, Any]:
        run = self.run(run_id)
        with self.engine.connect() as conn:
            return {t.task_id: t for t in ti_repo.by_run(conn, run.id)}

    def states(self, run_id: str | None = None) -> dict[str, str]:
        return {k: v.state for k, v in self.tis(run_id).items()}

    def history(self, run_id: str | None = None) -> list[Any]:
        with self.engine.connect() as conn:
            return transitions_log.for_run(conn, self.dag.dag_id, run_id or self.run_id)

    def ti_history(self, task_id: str, run_id: str | None = None) -> list[Any]:
        ti = self.tis(run_id)[task_id]
        with self.engine.connect() as conn:
            return transitions_log.for_task_instance(conn, ti.id)

    def move(self, task_id: str, *path: TI, actor: Actor = Actor.SCHEDULER,
             **values: Any) -> None:
        """Walk a task instance through ``path`` via the door (to set up a state)."""
        ti = self.tis()[task_id]
        state = TI(ti.state)
        with transaction(self.engine) as conn:
            for to in path:
                res = door.set_task_instance_state(
                    conn, ti.id, frm=state, to=to, actor=actor, now=self.clock(),
                    increment_try=to is TI.RUNNING and state is TI.QUEUED,
                    values=values if to is path[-1] else None)
                assert res.changed, (task_id, state, to, res)
                state = to

    def defer(self, task_id: str) -> int:
        """Put a task instance in ``deferred`` with a trigger row, as a worker would."""
        with transaction(self.engine) as conn:
            trigger_id = conn.execute(insert(trigger).values(
                classpath="statewright.sdk.triggers.temporal.TimeDeltaTrigger", kwargs="x",
                created_date=self.clock()).returning(trigger.c.id)).scalar_one()
        self.move(task_id, TI.SCHEDULED, TI.QUEUED, TI.RUNNING, TI.DEFERRED,
                  trigger_id=trigger_id, next_method="execute_complete")
        return int(trigger_id)

    def trigger_exists(self, trigger_id: int) -> bool:
        with self.engine.connect() as conn:
            return conn.execute(select(trigger.c.id).where(trigger.c.id == trigger_id)).first() \
                is not None

    def history_count(self) -> int:
        with self.engine.connect() as conn:
            return len(conn.execute(select(state_transition.c.id)).all())


def assert_history_is_allowed(rows: list[Any]) -> None:
    """Every recorded change is an allowed edge for the actor that took it (a row whose from
    and to states are equal records a name change or a note, not an edge)."""
    for r in rows:
        if r.from_state is None or r.from_state == r.to_state:
            continue
        if r.entity == "task_instance":
            task_instance_edge(TI(r.from_state), TI(r.to_state), Actor(r.actor))
        else:
            from statewright.core.states import RUN

            dag_run_edge(RUN(r.from_state), RUN(r.to_state), Actor(r.actor))


def edges(rows: list[Any], task_id: str | None = None) -> list[tuple[Any, ...]]:
    return [(r.from_state, r.to_state, r.name, r.actor) for r in rows
            if r.from_state != r.to_state and (task_id is None or r.task_id == task_id)
            and r.from_state is not None]


@pytest.fixture
def harness(engine: Engine) -> Callable[[Any], Harness]:
    return lambda dag: Harness(engine, dag)


@pytest.fixture
def check_history() -> Callable[[list[Any]], None]:
    return assert_history_is_allowed


@pytest.fixture
def edges_of() -> Callable[..., list[tuple[Any, ...]]]:
    return edges
