"""Writing the notes of DAG runs and task instances (Airflow 3's ``note``), as ``PATCH`` with
``update_mask=note`` under ``/api/v2`` does (operators and admins, as any write); each note
written is kept with who wrote it and when (``api/routers/notes.py`` reads that history)."""

from __future__ import annotations

from fastapi import Request

from statewright.api import reads
from statewright.api.deps import writing
from statewright.core.clock import utcnow
from statewright.db.repositories import notes as note_repo
from statewright.db.repositories import task_instances as ti_repo


def _username(request: Request) -> str | None:
    identity = getattr(request.state, "identity", None)
    return getattr(identity, "username", None)


def _audit(request: Request, what: str, text: str | None) -> None:
    request.state.audit_detail = f"note of {what}: {text!r}" if text else f"note of {what} cleared"


def set_run_note(request: Request, dag_id: str, run_id: str, text: str | None) -> None:
    """Write the run's note (an empty text clears it); the audit log records it."""
    with writing(request) as conn:
        run = reads.run_row(conn, dag_id, run_id)
        note_repo.write(conn, run.id, text, _username(request), utcnow())
    _audit(request, f"run {run_id}", text)


def set_task_note(request: Request, dag_id: str, run_id: str, task_id: str,
                  map_index: int | None, text: str | None, *, dry_run: bool = False
                  ) -> list[int]:
    """Write the note of the task instance (``map_index`` None: of each instance of the task);
    answers the map indexes written (``dry_run``: that would be, writing nothing)."""
    with writing(request) as conn:
        if map_index is None:
            run = reads.run_row(conn, dag_id, run_id)
            indexes = [r.map_index for r in ti_repo.mapped_instances(conn, run.id, task_id)]
            if not indexes:
                reads.ti_row(conn, dag_id, run_id, task_id)  # 404 naming the task
        else:
            run, row = reads.ti_row(conn, dag_id, run_id, task_id, map_index)
            indexes = [row.map_index]
        if dry_run:
            return indexes
        note_repo.write(conn, run.id, text, _username(request), utcnow(), task_id=task_id,
                        map_indexes=indexes)
    _audit(request, f"task {task_id} of run {run_id}", text)
    return indexes
