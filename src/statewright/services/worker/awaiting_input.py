"""Applying a try that asks a person for input (``TaskAwaitingInput``).

In one transaction, the supervising worker records the request (``hitl_detail``), keeps the
continuation on the task instance (``next_method``, ``next_kwargs``) and moves it running →
awaiting_input through the door, fenced on the try. Nothing else is held while it waits: no
process, no worker or pool slot, no trigger. A lost race removes the request again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection

from statewright.core.hitl import respondent_names
from statewright.core.states import TI, TaskInstanceState
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.repositories import hitl as hitl_repo

log = logging.getLogger("statewright.worker.hitl")

AWAITING_INPUT = "awaiting_input"


def apply_awaiting_input(conn: Connection, results: Sequence[Any], *, now: datetime,
                         actor: Actor = Actor.WORKER) -> dict[int, TaskInstanceState]:
    if not results:
        return {}
    requests: list[dict[str, Any]] = []
    waiting: list[dict[str, Any]] = []
    for r in results:
        spec = r.extra["hitl"]
        req = dict(spec["request"])
        timeout = spec.get("timeout")
        requests.append({
            "ti_id": r.ti_id, "try_number": r.try_number,
            "subject": str(req.get("subject") or ""), "body": req.get("body"),
            "options": list(req["options"]), "multiple": bool(req.get("multiple")),
            "defaults": req.get("defaults"), "params": req.get("params"),
            "respondents": respondent_names(req.get("respondents")), "created_at": now,
            "timeout_at": None if timeout is None else now + timedelta(seconds=timeout)})
        waiting.append({"id": r.ti_id, "try_number": r.try_number,
                        "next_method": spec["method_name"],
                        "next_kwargs": dict(spec.get("kwargs") or {})})
    hitl_repo.put_requests(conn, requests)
    hitl_repo.set_waiting_fields(conn, waiting)
    res = door.set_task_instance_state(
        conn, [], fenced=[(r.ti_id, r.try_number) for r in results], frm=TI.RUNNING,
        to=TI.AWAITING_INPUT, actor=actor, now=now)
    if res.lost:
        hitl_repo.delete_requests(conn, sorted(res.lost))
        log.warning("requests for input of %s lost a race; removed", sorted(res.lost))
    for r in results:
        if r.ti_id in res.changed:
            log.info("%s.%s run %s try %s awaits input", r.dag_id, r.task_id, r.run_id,
                     r.try_number)
    return {pk: TI.AWAITING_INPUT for pk in res.changed}
