"""What the triggerer writes: fired events, failures, timeouts and the clean-up of triggers.

Each is a compare-and-set through the door on ``deferred`` (fenced on the try), so one event
resumes a task instance once, whichever triggerer sends it first; the trigger row is deleted in
the same transaction. The seed's transition table:

| event          | to          | trigger_id | next_method         | next_kwargs                 |
| -------------- | ----------- | ---------- | ------------------- | --------------------------- |
| trigger fires  | scheduled   | cleared    | kept (the callback) | the defer kwargs + ``event`` |
| timeout        | scheduled   | cleared    | ``__fail__``        | ``error``, ``reason``       |
| trigger fails  | scheduled   | cleared    | ``__fail__``        | ``error``, ``traceback``    |
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import triggers as trigger_repo
from statewright.sdk import masking

log = logging.getLogger("statewright.triggerer")
ACTOR = Actor.TRIGGERER
FAIL_METHOD = "__fail__"


@dataclass(frozen=True)
class Fired:
    trigger_id: int
    payload: Any
    """The event payload as serialized data (``TriggerEvent.to_data()``)."""
    end_from_trigger: bool = False


@dataclass(frozen=True)
class Failure:
    trigger_id: int
    error: str
    traceback: str | None = None
    reason: str = "trigger_failure"


@dataclass
class Applied:
    resumed: list[int] = field(default_factory=list)
    succeeded: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    timed_out: list[int] = field(default_factory=list)
    stale: list[int] = field(default_factory=list)
    """Trigger ids whose event found no deferred task instance (cleared, already resumed)."""


def apply_events(
    conn: Connection,
    fired: Sequence[Fired],
    failures: Sequence[Failure],
    *,
    now: datetime,
    triggerer_id: int | None = None,
) -> Applied:
    """Resume (or fail) the task instances waiting on the triggers that sent an event.

    With ``triggerer_id``, only events of triggers still assigned to that triggerer count: a
    triggerer whose triggers were taken over (it looked dead) cannot resume anything.
    """
    out = Applied()
    ids = {f.trigger_id for f in fired} | {f.trigger_id for f in failures}
    if not ids:
        return out
    # Only the triggers still assigned to ``triggerer_id`` count (the join in the read).
    waiting: dict[int, list[Any]] = defaultdict(list)
    for row in trigger_repo.deferred_on(conn, ids, owner=triggerer_id):
        waiting[row.trigger_id].append(row)
    kwargs_rows: list[tuple[int, Any]] = []
    resume: list[tuple[int, int]] = []
    finish: list[Any] = []
    for f in fired:
        for row in waiting.get(f.trigger_id, []):
            if f.end_from_trigger:
                finish.append(row)
                continue
            kwargs_rows.append((row.id, {**dict(row.next_kwargs or {}), "event": f.payload}))
            resume.append((row.id, row.try_number))
    fail_groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for fl in failures:
        for row in waiting.get(fl.trigger_id, []):
            # Secrets the trigger registered (its connections' passwords) are *** when stored.
            error = masking.redact(fl.error)
            data = {"error": error, "reason": fl.reason}
            if fl.traceback:
                data["traceback"] = masking.redact(fl.traceback)
            kwargs_rows.append((row.id, data))
            fail_groups[_first_line(error)].append((row.id, row.try_number))
    out.stale += sorted(i for i in ids if i not in waiting)
    trigger_repo.set_next_kwargs(conn, kwargs_rows)
    if resume:
        out.resumed = door.set_task_instance_state(
            conn, [], fenced=resume, frm=TI.DEFERRED, to=TI.SCHEDULED, actor=ACTOR, now=now,
            message="trigger fired", values={"trigger_id": None}).changed
    for message, pairs in fail_groups.items():
        out.failed += door.set_task_instance_state(
            conn, [], fenced=pairs, frm=TI.DEFERRED, to=TI.SCHEDULED, actor=ACTOR, now=now,
            message=message, values={"trigger_id": None, "next_method": FAIL_METHOD}).changed
    if finish:
        out.succeeded = _end_from_trigger(conn, finish, now)
    trigger_repo.delete_many(conn, ids, owner=triggerer_id)
    return out


def _end_from_trigger(conn: Connection, rows: Sequence[Any], now: datetime) -> list[int]:
    res = door.set_task_instance_state(
        conn, [], fenced=[(r.id, r.try_number) for r in rows], frm=TI.DEFERRED, to=TI.SUCCESS,
        actor=ACTOR, now=now, message="the trigger ended the task",
        values={"trigger_id": None, "next_method": None, "next_kwargs": None,
                "trigger_timeout": None})
    done = set(res.changed)
    ti_repo.add_history(conn, [{
        "task_instance_id": r.id, "dag_id": r.dag_id, "run_id": r.run_id, "task_id": r.task_id,
        "try_number": r.try_number, "state": TI.SUCCESS.value, "state_name": "Success",
        "state_message": "the trigger ended the task", "hostname": r.hostname, "pid": r.pid,
        "start_date": r.start_date, "end_date": now,
        "duration": (now - r.start_date).total_seconds() if r.start_date else None,
        "error": None, "traceback": None, "log_path": None,
    } for r in rows if r.id in done])
    return res.changed


def apply_timeouts(conn: Connection, *, now: datetime, limit: int = 1000) -> list[Any]:
    """Deferred task instances past their ``trigger_timeout`` go to scheduled with
    ``__fail__``; their triggers are deleted. Returns the rows that timed out."""
    rows = trigger_repo.timed_out(conn, now, limit)
    if not rows:
        return []
    trigger_repo.set_next_kwargs(conn, [
        (r.id, {"error": "Trigger timeout: the task waited on its trigger past its deferral "
                         "timeout", "reason": "timeout"}) for r in rows])
    res = door.set_task_instance_state(
        conn, [], fenced=[(r.id, r.try_number) for r in rows], frm=TI.DEFERRED,
        to=TI.SCHEDULED, actor=ACTOR, now=now, message="trigger timeout",
        values={"trigger_id": None, "next_method": FAIL_METHOD})
    trigger_repo.delete_many(conn, [r.trigger_id for r in rows if r.trigger_id is not None])
    changed = set(res.changed)
    return [r for r in rows if r.id in changed]


@dataclass
class CleanUp:
    stale_references: int = 0
    reset_resume_fields: int = 0
    deleted: list[Any] = field(default_factory=list)


def clean_up(conn: Connection) -> CleanUp:
    """Triggers no deferred task instance waits on (cleared, removed, marked) are deleted."""
    out = CleanUp()
    out.stale_references = trigger_repo.clear_stale_references(conn)
    out.reset_resume_fields = trigger_repo.clear_stale_resume_fields(conn)
    out.deleted = trigger_repo.delete_unreferenced(conn)
    return out


def _first_line(text: str) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else "trigger failed"
    return line if len(line) <= 300 else line[:297] + "..."
