"""Late (Prefect's name): runs and task instances that wait longer than they should.

A run ``queued`` for longer than its threshold, or a task instance ``scheduled`` or ``queued``
for longer than its threshold, gets the state name ``Late``; the type stays. When it moves on
(the run starts, the task instance is queued or starts) the door gives it its usual name again.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine

from statewright.core.states import RUN, TI, StateName
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import scheduling as sched_repo

if TYPE_CHECKING:
    from statewright.services.scheduler.scheduler import Scheduler

ACTOR = Actor.SCHEDULER


def any_late(conn: Connection, now: datetime, *, run_threshold: timedelta,
             task_threshold: timedelta) -> bool:
    """Does a run or a task instance wait past its threshold without the name Late yet?"""
    return bool(sched_repo.runs_to_name_late(conn, now - run_threshold, 1)
                or sched_repo.task_instances_to_name_late(conn, now - task_threshold, 1))


def mark_late(engine: Engine, now: datetime, *, run_threshold: timedelta,
              task_threshold: timedelta) -> int:
    """Name Late what waits past its threshold; returns how many were renamed."""
    with read_snapshot(engine) as conn:
        if not any_late(conn, now, run_threshold=run_threshold, task_threshold=task_threshold):
            return 0
    with transaction(engine) as conn:
        runs = sched_repo.runs_to_name_late(conn, now - run_threshold)
        n = len(door.rename_dag_runs(
            conn, runs, state=RUN.QUEUED, name=StateName.LATE, actor=ACTOR, now=now,
            message=f"queued for more than {run_threshold.total_seconds():g}s"))
        for state, ids in sched_repo.task_instances_to_name_late(
                conn, now - task_threshold).items():
            n += len(door.rename_task_instances(
                conn, ids, state=TI(state), name=StateName.LATE, actor=ACTOR, now=now,
                message=f"{state} for more than {task_threshold.total_seconds():g}s"))
    return n


class LateNaming:
    """The scheduler step (``Scheduler(extra_steps=[LateNaming(...)])``)."""

    def __init__(self, *, run_threshold: timedelta = timedelta(seconds=60),
                 task_threshold: timedelta = timedelta(seconds=60)) -> None:
        self.run_threshold = run_threshold
        self.task_threshold = task_threshold

    def __call__(self, scheduler: Scheduler, now: datetime) -> int:
        return mark_late(scheduler.engine, now, run_threshold=self.run_threshold,
                         task_threshold=self.task_threshold)

    due_moves_with_now = True  # ``due_probe``: its query is built once

    def due(self, now: datetime) -> Any:
        """Something waits past its threshold (read in the scheduler pass's probe)."""
        return sched_repo.any_late_clause(now - self.run_threshold, now - self.task_threshold)
