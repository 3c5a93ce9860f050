"""The response timeouts of task instances awaiting input (human in the loop).

Each pass reads, from the ``(responded_at, timeout_at)`` index, the unanswered requests whose
timeout has passed (never a scan of the waiting task instances) and resumes each: with its
defaults as the response (recorded as timed out, by no one), else with a timeout error that
fails the try in its continuation (``HITLTimeoutError``, retried as any failure). A person
responding at the same moment and this step race on the request's compare-and-set: one wins.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from statewright.core.hitl import filled_params, timeout_event
from statewright.core.transitions import Actor
from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import hitl as hitl_repo
from statewright.services.hitl import resume

if TYPE_CHECKING:
    from statewright.services.scheduler.scheduler import Scheduler

ACTOR = Actor.SCHEDULER


def apply_timeouts(engine: Engine, now: datetime, *, limit: int = 500) -> int:
    """Resume the task instances whose response timeout passed; returns how many."""
    with read_snapshot(engine) as conn:
        if not hitl_repo.due_timeouts(conn, now, limit=1):
            return 0
    n = 0
    with transaction(engine) as conn:
        # Resumed in two batches: the defaults taken, or the try failing.
        batches: dict[bool, tuple[list[tuple[int, int]], list[dict[str, Any]]]] = {
            True: ([], []), False: ([], [])}
        for row in hitl_repo.due_timeouts(conn, now, limit=limit):
            event = timeout_event(row.defaults)
            if row.defaults:
                params = filled_params(dict(row.params or {}), {})
                event.update(params_input=params, responded_at=now)
                won = hitl_repo.record_response(
                    conn, row.ti_id, row.try_number, chosen_options=list(row.defaults),
                    params_input=params, responded_by=None, now=now, timed_out=True)
            else:
                won = hitl_repo.mark_timed_out(conn, row.ti_id, row.try_number, now)
            if won:  # else a person was first
                pairs, events = batches[bool(row.defaults)]
                pairs.append((row.ti_id, row.try_number))
                events.append(event)
        for with_defaults, (pairs, events) in batches.items():
            message = ("response timeout passed: the defaults were taken" if with_defaults
                       else "response timeout passed with no response and no defaults")
            n += len(resume(conn, pairs, events, actor=ACTOR, now=now, message=message,
                            strict=False))
    return n


class HITLTimeouts:
    """The scheduler step (``Scheduler(extra_steps=[HITLTimeouts()])``)."""

    def __call__(self, scheduler: Scheduler, now: datetime) -> int:
        return apply_timeouts(scheduler.engine, now)

    due_moves_with_now = True  # ``due_probe``: its query is built once

    def due(self, now: datetime) -> Any:
        """A response timeout passed (read in the scheduler pass's probe)."""
        return hitl_repo.due_timeouts_query(now)
