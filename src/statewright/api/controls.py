"""The REST API's side of the run controls: clear, mark, cancel, pause and resume.

The controls themselves live in ``statewright.services.controls``; every change they make goes
through the one door with the person's actor (``user:<name>``). This module checks that the run
and tasks exist (404), calls the control and turns its plan into a response body.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fastapi import Request

from statewright.api import reads
from statewright.api import schemas as s
from statewright.api.auth.audit import note_dry_run
from statewright.api.auth.credentials import actor_of
from statewright.api.deps import engine_of, reading
from statewright.api.errors import BadRequest, NotFound
from statewright.core.clock import utcnow
from statewright.core.states import RUN, TI
from statewright.db.repositories import task_instances as ti_repo
from statewright.services import controls
from statewright.services.flows.run_input import NO_INPUT, RunInputError


def result(plan: Any, *, dry_run: bool) -> s.ControlResult:
    return results([plan], dry_run=dry_run)


def _run_change(plan: Any) -> s.PlannedRunChangeOf | None:
    rc = plan.run_change
    if rc is None:
        return None
    return s.PlannedRunChangeOf(dag_run_id=plan.run_id, from_state=rc.frm.value,
                                to_state=rc.to.value, message=rc.message)


def results(plans: Sequence[Any], *, dry_run: bool) -> s.ControlResult:
    """The plans of one control (the chosen run's first, then the other runs it reached) as
    one response: every change carries its run id."""
    first = plans[0]
    acted = [p for p in plans if p is first or not p.empty]
    many = len(plans) > 1
    return s.ControlResult(
        action=first.action, dag_id=first.dag_id, dag_run_id=first.run_id, dry_run=dry_run,
        applied=not dry_run and any(not p.empty for p in plans),
        notice=first.notice if all(p.empty for p in plans) else None,
        changes=[s.PlannedChange(dag_run_id=p.run_id, task_id=c.task_id, map_index=c.map_index,
                                 from_state=c.frm.value,
                                 to_state=c.to.value, path=[x.value for x in c.path],
                                 name=c.name.value if c.name else None,
                                 try_number=c.try_number, kills_try=c.kills_try)
                 for p in acted for c in p.changes],
        run_change=s.PlannedRunChange(**rc.model_dump(exclude={"dag_run_id"}))
        if (rc := _run_change(first)) is not None else None,
        run_changes=[rc for p in acted if (rc := _run_change(p)) is not None],
        unchanged=[{"task_id": t, "reason": why, **({"dag_run_id": p.run_id} if many else {})}
                   for p in plans for t, why in p.unchanged],
        results_deleted_for=[r for p in acted for r in p.deletes_results_of],
        description=[line for p in acted for line in p.describe()],
    )


def _known_tasks(request: Request, dag_id: str, run_id: str, task_ids: Sequence[str]) -> None:
    with reading(request) as conn:
        run = reads.run_row(conn, dag_id, run_id)
        known = {t.task_id for t in ti_repo.by_run(conn, run.id)}
    missing = [t for t in task_ids if t not in known]
    if missing:
        raise NotFound(f"Run {run_id!r} of DAG {dag_id!r} has no task "
                       f"{', '.join(repr(t) for t in missing)}; its tasks are: "
                       f"{', '.join(sorted(known)) or '(none)'}. Nothing was changed.")


def _exactly(task_ids: Sequence[str]) -> list[str]:
    return [f"^{re.escape(t)}$" for t in task_ids]


def clear_run(request: Request, dag_id: str, run_id: str, body: s.ClearBody) -> s.ControlResult:
    task_ids = body.task_ids or []
    note_dry_run(request.state, body.dry_run)
    _known_tasks(request, dag_id, run_id, task_ids)
    plan = controls.clear_task_instances(
        engine_of(request), run_id, dag_id=dag_id, task_regexes=_exactly(task_ids),
        upstream=body.include_upstream, downstream=body.include_downstream,
        only_failed=body.only_failed, recursive=body.recursive, dry_run=body.dry_run,
        actor=actor_of(request), now=utcnow(), clear_state=body.clear_state)
    return result(plan, dry_run=body.dry_run)


def clear_task(request: Request, dag_id: str, run_id: str, task_id: str,
               body: s.TaskClearBody, map_index: int = -1) -> s.ControlResult:
    note_dry_run(request.state, body.dry_run)
    _known_tasks(request, dag_id, run_id, [task_id])
    plans = controls.clear_across_runs(
        engine_of(request), run_id, dag_id=dag_id, task_regexes=_exactly([task_id]),
        upstream=body.include_upstream, downstream=body.include_downstream,
        only_failed=body.only_failed, past=body.include_past, future=body.include_future,
        recursive=body.recursive, map_indexes=_indexes(map_index), dry_run=body.dry_run,
        actor=actor_of(request), now=utcnow(), clear_state=body.clear_state)
    return results(plans, dry_run=body.dry_run)


def set_run_state(request: Request, dag_id: str, run_id: str, body: s.DagRunPatch) -> None:
    with reading(request) as conn:
        reads.run_row(conn, dag_id, run_id)
    engine, now = engine_of(request), utcnow()
    common: dict[str, Any] = {"dag_id": dag_id, "actor": actor_of(request), "now": now}
    given = "input" in body.model_fields_set
    if given and body.state != "running":
        raise BadRequest("body field 'input' goes with state 'running' only (the input of a "
                         "paused flow run, given when it is resumed).")
    if body.state in ("success", "failed"):
        controls.mark_run(engine, run_id, RUN(body.state), **common)
    elif body.state == "cancelled":
        controls.cancel_run(engine, run_id, **common)
    elif body.state == "paused":
        controls.pause_run(engine, run_id, **common)
    else:
        try:
            controls.resume_run(engine, run_id, **common,
                                run_input=body.input if given else NO_INPUT)
        except RunInputError as exc:
            raise BadRequest(str(exc)) from None


def mark_task(request: Request, dag_id: str, run_id: str, task_id: str,
              body: s.TaskInstancePatch, map_index: int = -1, *,
              dry_run: bool = False) -> s.ControlResult:
    _known_tasks(request, dag_id, run_id, [task_id])
    plans = controls.mark_across_runs(
        engine_of(request), run_id, task_id, TI(body.new_state), dag_id=dag_id,
        upstream=body.include_upstream, downstream=body.include_downstream,
        past=body.include_past, future=body.include_future,
        map_indexes=_indexes(map_index), dry_run=dry_run, actor=actor_of(request),
        now=utcnow())
    return results(plans, dry_run=dry_run)


def _indexes(map_index: int) -> list[int] | None:
    """One map index of a mapped task; -1: the task's every instance."""
    return None if map_index < 0 else [map_index]
