"""Helpers for the triggerer tests: a DAG run in the database, task instances deferred on
triggers through the worker's own code path."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.sdk.exceptions import TaskDeferred
from statewright.sdk.runtime import _deferred
from statewright.services.dag_runs import create_run
from statewright.services.dag_view import DagView
from statewright.services.worker import deferral
from statewright.services.worker.outcome import TryResult


def make_run(engine: Engine, n_tasks: int = 1, dag_id: str = "waits",
             retries: int = 0) -> dict[str, int]:
    """A running DAG run of ``n_tasks`` independent tasks; returns task_id -> ti id."""
    serialized = {"dag_id": dag_id, "fileloc": None, "tasks": [
        {"task_id": f"t{i}", "upstream": [], "downstream": [], "retries": retries}
        for i in range(n_tasks)]}
    now = utcnow()
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, serialized, now=now)
        run_pk = create_run(conn, DagView(serialized, dag_repo.dag_hash(serialized)), now=now,
                            actor=Actor.USER)
        door.set_dag_run_state(conn, run_pk, frm="queued", to="running", actor=Actor.SCHEDULER,
                               now=now)
        return {t.task_id: t.id for t in ti_repo.by_run(conn, run_pk)}


def start_try(engine: Engine, ti_ids: list[int]) -> None:
    now = utcnow()
    with transaction(engine) as conn:
        for frm, to, actor in ((TI.NONE, TI.SCHEDULED, Actor.SCHEDULER),
                               (TI.SCHEDULED, TI.QUEUED, Actor.SCHEDULER)):
            door.set_task_instance_state(conn, ti_ids, frm=frm, to=to, actor=actor, now=now)
        door.set_task_instance_state(conn, ti_ids, frm=TI.QUEUED, to=TI.RUNNING,
                                     actor=Actor.EXECUTOR, now=now, increment_try=True)


def defer(engine: Engine, ti_ids: list[int], make_trigger: Any, *, method: str = "done",
          timeout: timedelta | None = None, kwargs: dict[str, Any] | None = None,
          start: bool = True) -> dict[int, Any]:
    """Start a try of each task instance and defer it as a worker would."""
    if start:
        start_try(engine, ti_ids)
    results = []
    with engine.connect() as conn:
        rows = {pk: ti_repo.get(conn, pk) for pk in ti_ids}
    for pk in ti_ids:
        row = rows[pk]
        exc = TaskDeferred(trigger=make_trigger(), method_name=method, kwargs=kwargs,
                           timeout=timeout)
        outcome = _deferred(exc)
        results.append(TryResult(ti_id=pk, try_number=row.try_number, dag_id=row.dag_id,
                                 run_id=row.run_id, task_id=row.task_id,
                                 dag_run_id=row.dag_run_id, kind=outcome.kind,
                                 extra=outcome.extra, start_date=utcnow()))
    with transaction(engine) as conn:
        reached, failed = deferral.apply_waiting(conn, results, now=utcnow())
    assert not failed
    return reached


def ti_row(engine: Engine, pk: int) -> Any:
    with engine.connect() as conn:
        return ti_repo.get(conn, pk)
