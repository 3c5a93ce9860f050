"""The runs a ``TriggerDagRunOperator`` try asked for, created by its worker in the transaction
that applies the try's outcome (success, or deferral to wait for the run).

A target DAG that does not exist, or a run id that exists already, fails the try with the reason
(``reset_dag_run``: the existing run is cleared and runs again; ``skip_when_already_exists``: the
try is skipped instead). So does another run at the logical date (one run per logical date),
which ``reset_dag_run`` does not clear. A loop is refused: a run triggering its own DAG, or a
DAG that triggered (directly or through other DAGs) the run asking.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection

from statewright.config import input_limits
from statewright.core.limits import InputTooLarge, check_value
from statewright.core.transitions import Actor
from statewright.db.repositories import run_triggers as run_trigger_repo
from statewright.db.repositories import runs as run_repo
from statewright.services.dag_runs import DagNotFound, trigger_dag

log = logging.getLogger("statewright.worker")
KEY = "dag_run_requests"
_APPLIES_TO = frozenset({"success", "deferred"})


def apply_requests(conn: Connection, results: Sequence[Any], *, now: datetime,
                   actor: Actor) -> None:
    """Create the requested runs; a try whose request cannot be met is failed (or skipped)."""
    for r in results:
        requests = (r.extra or {}).get(KEY)
        if not requests or r.kind not in _APPLIES_TO:
            continue
        for req in requests:
            problem = _create(conn, r, req, now=now, actor=actor)
            if problem is not None:
                kind, message = problem
                r.kind, r.error = kind, message
                log.error("%s.%s: %s", r.dag_id, r.task_id, message)
                break


def _create(conn: Connection, r: Any, req: dict[str, Any], *, now: datetime,
            actor: Actor) -> tuple[str, str] | None:
    dag_id, run_id = str(req["dag_id"]), str(req["run_id"])
    if dag_id == r.dag_id:
        return "fail_no_retry", (f"TriggerDagRunOperator would trigger its own DAG {dag_id!r}, "
                                 "a loop that never ends; nothing was triggered.")
    chain = run_trigger_repo.lineage(conn, r.dag_run_id)
    if dag_id in chain:
        loop = " -> ".join([*reversed(chain[:chain.index(dag_id) + 1]), dag_id])
        return "fail_no_retry", (f"TriggerDagRunOperator would close a loop of DAGs that "
                                 f"trigger each other ({loop}); nothing was triggered.")
    logical_date = datetime.fromisoformat(req["logical_date"])
    if run_repo.get_by_run_id(conn, dag_id, run_id) is not None:
        if req.get("reset_dag_run"):
            from statewright.services.controls.cross_dag import clear_whole_run

            # The controller runs again because a user cleared it: the target's clear is that
            # user's action carried on (clearing is a user's edge in the transition table).
            clear_whole_run(conn, dag_id, run_id, actor=Actor.USER, now=now)
            return None
        if req.get("skip_when_already_exists"):
            return "skipped", f"DAG {dag_id!r} already has a run {run_id!r}; skipped."
        return "failed", (f"DAG {dag_id!r} already has a run {run_id!r} (pass "
                          "reset_dag_run=True to clear it and run it again).")
    # A DAG has one run per logical date. As in Airflow, reset_dag_run clears a run of the
    # same run id only: another run at the date is a conflict the operator cannot settle.
    taken = run_repo.get_by_logical_date(conn, dag_id, logical_date)
    if taken is not None:
        at = logical_date.astimezone(UTC).isoformat()
        if req.get("skip_when_already_exists"):
            return "skipped", (f"DAG {dag_id!r} already has a run {taken.run_id!r} at logical "
                               f"date {at}; skipped.")
        return "failed", (f"DAG {dag_id!r} already has a run {taken.run_id!r} at logical date "
                          f"{at}, and a DAG has one run per logical date: trigger another "
                          f"date, or pass trigger_run_id={taken.run_id!r} with reset_dag_run="
                          "True to clear that run and run it again.")
    try:  # the input limits, as for a conf sent to the API
        check_value(req.get("conf") or {}, input_limits(), what="TriggerDagRunOperator's conf")
    except InputTooLarge as exc:
        return "fail_no_retry", str(exc).replace("Nothing was changed.", "Nothing was triggered.")
    try:
        pk, _ = trigger_dag(conn, dag_id, now=now, actor=actor, conf=req.get("conf") or {},
                            run_id=run_id, logical_date=logical_date)
    except DagNotFound as exc:
        return "failed", f"TriggerDagRunOperator: {exc}"
    run_trigger_repo.record(conn, pk, r.dag_run_id)
    return None
