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
from statewright.api.auth.credentials import actor_of
from statewright.api.deps import engine_of, reading
from statewright.api.errors import NotFound
from statewright.core.clock import utcnow
from statewright.core.states import RUN, TI
from statewright.db.repositories import task_instances as ti_repo
from statewright.services import controls


def result(plan: Any, *, dry_run: bool) -> s.ControlResult:
    return s.ControlResult(
        action=plan.action, dag_id=plan.dag_id, dag_run_id=plan.run_id, dry_run=dry_run,
        applied=not dry_run and not plan.empty, notice=plan.notice,
        changes=[s.PlannedChange(task_id=c.task_id, map_index=c.map_index,
                                 from_state=c.frm.value,
                                 to_state=c.to.value, path=[p.value for p in c.path],
                                 name=c.name.value if c.name else None,
                                 try_number=c.try_number, kills_try=c.kills_try)
                 for c in plan.changes],
        run_change=s.PlannedRunChange(from_state=plan.run_change.frm.value,
                                      to_state=plan.run_change.to.value,
                                      message=plan.run_change.message)
        if plan.run_change else None,
        unchanged=[{"task_id": t, "reason": why} for t, why in plan.unchanged],
        results_deleted_for=list(plan.deletes_results_of),
        description=plan.describe(),
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
    _known_tasks(request, dag_id, run_id, task_ids)
    plan = controls.clear_task_instances(
        engine_of(request), run_id, dag_id=dag_id, task_regexes=_exactly(task_ids),
        upstream=body.include_upstream, downstream=body.include_downstream,
        only_failed=body.only_failed, dry_run=body.dry_run, actor=actor_of(request), now=utcnow())
    return result(plan, dry_run=body.dry_run)


def clear_task(request: Request, dag_id: str, run_id: str, task_id: str,
               body: s.TaskClearBody, map_index: int = -1) -> s.ControlResult:
    _known_tasks(request, dag_id, run_id, [task_id])
    plan = controls.clear_task_instances(
        engine_of(request), run_id, dag_id=dag_id, task_regexes=_exactly([task_id]),
        upstream=body.include_upstream, downstream=body.include_downstream,
        map_indexes=_indexes(map_index), dry_run=body.dry_run, actor=actor_of(request),
        now=utcnow())
    return result(plan, dry_run=body.dry_run)


def set_run_state(request: Request, dag_id: str, run_id: str, body: s.DagRunPatch) -> None:
    with reading(request) as conn:
        reads.run_row(conn, dag_id, run_id)
    engine, now = engine_of(request), utcnow()
    common: dict[str, Any] = {"dag_id": dag_id, "actor": actor_of(request), "now": now}
    if body.state in ("success", "failed"):
        controls.mark_run(engine, run_id, RUN(body.state), **common)
    elif body.state == "cancelled":
        controls.cancel_run(engine, run_id, **common)
    elif body.state == "paused":
        controls.pause_run(engine, run_id, **common)
    else:
        controls.resume_run(engine, run_id, **common)


def mark_task(request: Request, dag_id: str, run_id: str, task_id: str,
              body: s.TaskInstancePatch, map_index: int = -1) -> None:
    _known_tasks(request, dag_id, run_id, [task_id])
    controls.mark_task_instances(
        engine_of(request), run_id, task_id, TI(body.new_state), dag_id=dag_id,
        upstream=body.include_upstream, downstream=body.include_downstream,
        map_indexes=_indexes(map_index), actor=actor_of(request),
        now=utcnow())


def _indexes(map_index: int) -> list[int] | None:
    """One map index of a mapped task; -1: the task's every instance."""
    return None if map_index < 0 else [map_index]
