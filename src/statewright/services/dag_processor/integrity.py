"""Reconciling unfinished runs with a DAG whose task set changed (Airflow's ``verify_integrity``).

When a DAG file adds a task, every queued, running or paused run of the DAG gets a task
instance for it in ``none``; a task instance in ``removed`` whose task is back in the DAG
returns to ``none``. Task instances of tasks the DAG no longer has are set ``removed`` by the
scheduler when it next looks at the run (unfinished ones that are not queued, running or
deferred).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from sqlalchemy import Connection

from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.repositories import scheduling as sched_repo
from statewright.services.dag_view import DagView

ACTOR = Actor.DAG_PROCESSOR


def reconcile_runs(conn: Connection, view: DagView, *, now: datetime) -> tuple[int, int]:
    """(task instances created, task instances restored) in the DAG's unfinished runs."""
    runs = sched_repo.unfinished_runs(conn, view.dag_id)
    if not runs:
        return 0, 0
    existing: dict[int, set[str]] = defaultdict(set)
    restore: list[int] = []
    for row in sched_repo.task_instances_of_runs(conn, [r.id for r in runs]):
        existing[row.dag_run_id].add(row.task_id)
        if row.state == TI.REMOVED.value and row.task_id in view.tasks:
            restore.append(row.id)
    rows = view.task_rows()
    created = 0
    for run in runs:
        missing = [r for r in rows if r["task_id"] not in existing[run.id]]
        if missing:
            created += len(door.create_task_instances(
                conn, dag_run_id=run.id, dag_id=view.dag_id, run_id=run.run_id, rows=missing,
                actor=ACTOR, now=now))
    restored = door.set_task_instance_state(
        conn, restore, frm=TI.REMOVED, to=TI.NONE, actor=ACTOR, now=now,
        message="the task is back in the DAG")
    return created, len(restored.changed)
