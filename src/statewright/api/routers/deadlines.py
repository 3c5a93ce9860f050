"""The deadlines of a DAG run (its ``DeadlineAlert``s: when each is due, met or missed)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from statewright.api import reads
from statewright.api.deps import reading
from statewright.db.repositories import dag_callbacks as outbox
from statewright.db.repositories import deadlines as repo

router = APIRouter(tags=["Deadlines"])


class Deadline(BaseModel):
    id: int
    dag_id: str
    dag_run_id: str
    alert_index: int = Field(description="The alert's position in the DAG's deadline list.")
    reference: str = Field(description="DAGRUN_QUEUED_AT, DAGRUN_LOGICAL_DATE, FIXED_DATETIME "
                           "or AVERAGE_RUNTIME.")
    deadline_time: datetime
    status: str = Field(description="pending, missed (the run had not ended by then) or "
                        "cancelled (it ended in time).")
    missed_at: datetime | None = None
    cancelled_at: datetime | None = None
    message: str | None = None
    callback: str = Field(description="The callback's import path.")
    callback_kind: str = Field(description="async or sync.")
    callback_status: str | None = Field(
        default=None, description="A missed deadline's callback: pending, running, done or "
        "failed.")
    callback_error: str | None = None


class DeadlineCollection(BaseModel):
    deadlines: list[Deadline]
    total_entries: int


def run_deadlines(conn: Any, dag_id: str, run_id: str) -> DeadlineCollection:
    run = reads.run_row(conn, dag_id, run_id)
    rows = repo.for_run(conn, run.id)
    callbacks = {c.id: c for c in outbox.for_run(conn, run.id)}
    out = []
    for d in rows:
        cb = callbacks.get(d.callback_id) if d.callback_id is not None else None
        out.append(Deadline(
            id=d.id, dag_id=d.dag_id, dag_run_id=d.run_id, alert_index=d.alert_index,
            reference=d.reference, deadline_time=d.deadline_time, status=d.status,
            missed_at=d.missed_at, cancelled_at=d.cancelled_at, message=d.message,
            callback=str(d.callback.get("path", "")), callback_kind=str(d.callback.get("kind")),
            callback_status=None if cb is None else cb.status,
            callback_error=None if cb is None else cb.error))
    return DeadlineCollection(deadlines=out, total_entries=len(out))


@router.get("/dags/{dag_id}/dagRuns/{dag_run_id}/deadlines", response_model=DeadlineCollection)
def list_run_deadlines(request: Request, dag_id: str, dag_run_id: str) -> DeadlineCollection:
    """The run's deadlines, in the order of the DAG's alerts."""
    with reading(request) as conn:
        return run_deadlines(conn, dag_id, dag_run_id)
