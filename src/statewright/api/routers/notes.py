"""The history of the notes of DAG runs and task instances: every note written (who, when,
the text; null: cleared), oldest first, the last being the current note. The notes are
written through ``/api/v2`` (``PATCH …?update_mask=note``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel

from statewright.api import reads
from statewright.api.deps import reading
from statewright.db.repositories import notes as note_repo

router = APIRouter(tags=["notes"])
_RUN = "/dags/{dag_id}/dagRuns/{run_id}"
_TI = _RUN + "/taskInstances/{task_id}"


class NoteWritten(BaseModel):
    content: str | None
    """The note's text; null: the note was cleared."""
    username: str | None
    created_at: datetime


class NoteHistory(BaseModel):
    notes: list[NoteWritten]
    """Oldest first; the last one is the current note."""
    total_entries: int


def _history(rows: list[Any]) -> NoteHistory:
    return NoteHistory(notes=[NoteWritten.model_validate(r, from_attributes=True)
                              for r in rows], total_entries=len(rows))


@router.get(_RUN + "/noteHistory", response_model=NoteHistory)
def run_note_history(request: Request, dag_id: str, run_id: str) -> NoteHistory:
    """Every note written on the run, oldest first (the last is its note): who, when, what."""
    with reading(request) as conn:
        run = reads.run_row(conn, dag_id, run_id)
        return _history(note_repo.history(conn, run.id))


@router.get(_TI + "/noteHistory", response_model=NoteHistory)
def task_note_history(request: Request, dag_id: str, run_id: str, task_id: str) -> NoteHistory:
    """Every note written on the task instance (map index -1), oldest first."""
    return mapped_task_note_history(request, dag_id, run_id, task_id, -1)


@router.get(_TI + "/{map_index}/noteHistory", response_model=NoteHistory)
def mapped_task_note_history(request: Request, dag_id: str, run_id: str, task_id: str,
                             map_index: Annotated[int, Path(ge=-1)]) -> NoteHistory:
    """Every note written on one instance of a mapped task, oldest first."""
    with reading(request) as conn:
        run, row = reads.ti_row(conn, dag_id, run_id, task_id, map_index)
        return _history(note_repo.history(conn, run.id, task_id, row.map_index))

