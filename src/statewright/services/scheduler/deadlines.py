"""Deadline alerts: the scheduler step that finds passed deadlines from the index.

Each pass reads the pending deadlines whose time has come from the ``(status, deadline_time)``
index (never a scan of the runs), a batch at a time. A deadline whose run ended by then is
cancelled (met); any other is **missed**: recorded on the deadline row and in the run's state
history (a note, the state is unchanged), and its callback is queued in the ``dag_callback``
outbox, which an executor's callback runner runs like the DAG's other callbacks (sync and
async). Each change is a compare-and-set on the deadline's status, so two schedulers never
queue one callback twice.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from statewright.core import deadlines as rules
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import dag_callbacks as outbox
from statewright.db.repositories import deadlines as repo

if TYPE_CHECKING:
    from statewright.services.scheduler.scheduler import Scheduler

DEADLINE_CALLBACK = "deadline_callback"


def check_deadlines(engine: Engine, now: datetime, *, batch: int = 500) -> int:
    """Resolve the deadlines that passed; returns how many were missed."""
    with read_snapshot(engine) as conn:
        if not repo.any_due(conn, now):
            return 0
    with transaction(engine) as conn:
        rows = repo.due(conn, now, batch)
        met = [r.id for r in rows
               if not rules.is_missed(r.deadline_time, now=now, run_ended_at=r.run_ended_at)]
        repo.cancel(conn, met, now)
        won = repo.claim_missed(conn, [r.id for r in rows if r.id not in set(met)], now)
        missed = [r for r in rows if r.id in won]
        messages = [f"deadline missed: {r.reference} deadline "
                    f"{r.deadline_time.isoformat(timespec='seconds')} passed before the run "
                    "ended" for r in missed]
        callback_ids = outbox.add_returning(conn, [
            {"dag_run_id": r.dag_run_id, "dag_id": r.dag_id, "run_id": r.run_id,
             "kind": DEADLINE_CALLBACK, "run_state": "missed", "reason": m, "created_at": now}
            for r, m in zip(missed, messages, strict=True)])
        repo.link_callbacks(conn, [(r.id, cb, m) for r, cb, m
                                   in zip(missed, callback_ids, messages, strict=True)])
        notes: dict[int, list[str]] = {}
        for r, m in zip(missed, messages, strict=True):
            notes.setdefault(r.dag_run_id, []).append(m)
        door.note_dag_runs(conn, [(pk, "; ".join(ms)) for pk, ms in notes.items()],
                           actor=Actor.SCHEDULER, now=now)
    return len(missed)


class DeadlineCheck:
    """The scheduler step (``Scheduler(extra_steps=[DeadlineCheck()])``)."""

    def __init__(self, *, batch: int = 500) -> None:
        self.batch = batch

    def __call__(self, scheduler: Scheduler, now: datetime) -> int:
        return check_deadlines(scheduler.engine, now, batch=self.batch)

    due_moves_with_now = True  # ``due_probe``: its query is built once

    def due(self, now: datetime) -> Any:
        """A pending deadline passed (read in the scheduler pass's probe)."""
        return repo.due_query(now)
