"""Responding to a task awaiting input, for the API, the CLI and the web UI.

One transaction: the request is read, the responder's right and the response are checked
(nothing is written when they fail), the response is written once (a compare-and-set on the
unanswered request) and the task instance moves awaiting_input → scheduled through the door
with the person as the actor, its continuation carrying the response as the ``event``. Of two
people responding at once exactly one wins; the other gets ``AlreadyResponded``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine

from statewright.core.errors import StatewrightError
from statewright.core.hitl import filled_params, may_respond, response_problems
from statewright.core.states import TI
from statewright.core.transitions import Who
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import hitl as hitl_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo


class HITLError(StatewrightError):
    """A response that cannot be taken; nothing was written."""


class RequestNotFound(HITLError):
    """No such task instance, or it never asked for input."""


class NotAwaitingInput(HITLError):
    """The task instance is not awaiting input (anymore): it was answered, or moved on."""


class AlreadyResponded(NotAwaitingInput):
    """Someone else responded first."""


class NotAllowed(HITLError):
    """The person is not among those the request names."""


class InvalidResponse(HITLError):
    def __init__(self, message: str, problems: Sequence[tuple[str, str]]) -> None:
        super().__init__(message)
        self.problems = list(problems)


@dataclass(frozen=True)
class Responder:
    """Who responds: the name recorded (``user:alice``), the user name and roles checked
    against the request's ``respondents``, and the actor of the state change."""

    username: str
    roles: Collection[str]
    actor: Who


def find_request(conn: Connection, dag_id: str, run_id: str, task_id: str,
                 map_index: int = -1) -> Any:
    run = run_repo.get_by_run_id(conn, dag_id, run_id)
    row = ti_repo.get_by_key(conn, run.id, task_id, map_index) if run is not None else None
    if row is None:
        raise RequestNotFound(
            f"DAG {dag_id!r} run {run_id!r} has no task instance {task_id!r}"
            f"{f' [{map_index}]' if map_index >= 0 else ''}. Nothing was changed.")
    detail = hitl_repo.get(conn, row.id)
    if detail is None:
        raise RequestNotFound(
            f"Task instance {task_id!r} of DAG {dag_id!r} run {run_id!r} has not asked for "
            f"input (it is {row.state}). Nothing was changed.")
    return detail


def respond(engine: Engine, dag_id: str, run_id: str, task_id: str, *,
            chosen_options: Sequence[str], params_input: Mapping[str, Any] | None,
            responder: Responder, now: datetime, map_index: int = -1) -> Any:
    """Record the response and resume the task instance; returns the updated request row."""
    with transaction(engine) as conn:
        detail = find_request(conn, dag_id, run_id, task_id, map_index)
        where = f"task {task_id!r} of DAG {dag_id!r} run {run_id!r}"
        if detail.responded_at is not None or detail.state != TI.AWAITING_INPUT.value:
            raise (AlreadyResponded if detail.responded_at is not None else NotAwaitingInput)(
                f"The {where} is not awaiting input (it is {detail.state}"
                f"{', answered by ' + str(detail.responded_by) if detail.responded_by else ''})."
                " Nothing was changed.")
        if not may_respond(detail.respondents, responder.username, responder.roles):
            raise NotAllowed(
                f"{responder.username!r} may not respond to the {where}: only "
                f"{', '.join(detail.respondents)} may. Nothing was changed.")
        spec = dict(detail.params or {})
        problems = response_problems(
            options=detail.options, multiple=detail.multiple, params=spec,
            chosen_options=list(chosen_options), params_input=params_input)
        if problems:
            listed = "; ".join(f"{p.field!r}: {p.message}" for p in problems)
            raise InvalidResponse(f"Invalid response to the {where}: {listed}. Nothing was "
                                  "changed.", [(p.field, p.message) for p in problems])
        params = filled_params(spec, params_input or {})
        name = str(responder.actor)
        if not hitl_repo.record_response(
                conn, detail.ti_id, detail.try_number, chosen_options=list(chosen_options),
                params_input=params, responded_by=name, now=now):
            raise AlreadyResponded(f"The {where} was answered by someone else first. Nothing "
                                   "was changed.")
        event = {"chosen_options": list(chosen_options), "params_input": params,
                 "responded_at": now, "responded_by_user": {"id": responder.username,
                                                            "name": responder.username},
                 "timedout": False}
        resume(conn, [(detail.ti_id, detail.try_number)], [event], actor=responder.actor,
               now=now, message=f"responded: {', '.join(chosen_options)}")
        return hitl_repo.get(conn, detail.ti_id)


def resume(conn: Connection, pairs: Sequence[tuple[int, int]], events: Sequence[dict[str, Any]],
           *, actor: Who, now: datetime, message: str, strict: bool = True) -> list[int]:
    """awaiting_input → scheduled, each with its event added to its continuation's kwargs.
    A lost race (cleared, already resumed) raises ``AlreadyResponded`` when ``strict``, else
    leaves those out; returns the task instances resumed."""
    from statewright.sdk import serde

    if not pairs:
        return []
    stored = hitl_repo.next_kwargs_of(conn, [pk for pk, _ in pairs])
    hitl_repo.set_resume_kwargs(conn, [
        (pk, try_number, {**dict(stored.get(pk) or {}),
                          "event": serde.serialize(event, path="the response")})
        for (pk, try_number), event in zip(pairs, events, strict=True)])
    res = door.set_task_instance_state(
        conn, [], fenced=list(pairs), frm=TI.AWAITING_INPUT, to=TI.SCHEDULED, actor=actor,
        now=now, message=message)
    if res.lost and strict:
        raise AlreadyResponded("The task instance is not awaiting input anymore. Nothing "
                               "was changed.")
    return list(res.changed)
