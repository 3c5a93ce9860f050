"""Runs outside a task's own dates (``core.task_dates``): the task has no task instance in
them, and, as in Airflow, a task directly downstream of it is never scheduled (its upstream
never ends): it stays in ``none`` and the run ends failed as a deadlock unless another upstream
fails or skips it first."""

from __future__ import annotations

from sqlalchemy import Connection

from statewright.core.task_dates import task_in_run
from statewright.db.repositories import runs as run_repo
from statewright.services.dag_view import DagView


def waiting_on_absent(conn: Connection, run_pk: int, view: DagView) -> frozenset[str]:
    """Task ids of the run with a direct upstream that has no task instance in it (its dates)."""
    if not view.task_windows:
        return frozenset()
    run = run_repo.get(conn, run_pk)
    if run is None:
        return frozenset()
    absent = {t for t, window in view.task_windows.items()
              if not task_in_run(window, run.logical_date, run.run_type)}
    if not absent:
        return frozenset()
    return frozenset(t for t, v in view.tasks.items() if absent.intersection(v.upstream))
