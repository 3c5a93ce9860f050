"""``/api/v2/dags/{dag_id}/dagRuns``: trigger, list, get; ``clearTaskInstances``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel

from statewright.api import reads
from statewright.api import schemas as v1
from statewright.api.controls import clear_run
from statewright.api.deps import writing
from statewright.api.errors import ApiError, BadRequest, Conflict
from statewright.api.routers import dag_runs as v1_runs
from statewright.api.v2 import lists
from statewright.api.v2 import schemas as v2
from statewright.api.v2.common import CONFLICT, NOT_FOUND
from statewright.api.v2.notes import set_run_note
from statewright.core.states import RUN_TERMINAL
from statewright.db.repositories import db_clean

router = APIRouter(tags=["DagRun"])
ti_router = APIRouter(tags=["Task Instance"])


@router.post("/dags/{dag_id}/dagRuns", response_model=v2.DagRunResponse,
             responses={**NOT_FOUND, **CONFLICT})
def trigger_dag_run(request: Request, dag_id: str, body: v2.TriggerDagRunBody
                    ) -> v2.DagRunResponse:
    """Create a manual run, queued (the same service as /api/v1)."""
    if body.logical_date is not None and body.logical_date.tzinfo is None:
        raise BadRequest("Invalid request: body field 'logical_date' needs a timezone, e.g. "
                         "2026-01-01T00:00:00Z. Nothing was created.")
    run = v1_runs.trigger(request, dag_id, v1.TriggerDagRunBody(
        dag_run_id=body.dag_run_id, conf=body.conf, logical_date=body.logical_date,
        partition_key=body.partition_key))
    if body.note:
        set_run_note(request, dag_id, run.dag_run_id, body.note)
    return lists.one_run(request, dag_id, run.dag_run_id)


@router.get("/dags/{dag_id}/dagRuns/{dag_run_id}", response_model=v2.DagRunResponse,
            responses=NOT_FOUND)
def get_dag_run(request: Request, dag_id: str, dag_run_id: str) -> v2.DagRunResponse:
    """One run."""
    return lists.one_run(request, dag_id, dag_run_id)


def fields_to_update(body: BaseModel, update_mask: list[str] | None, allowed: set[str]
                     ) -> set[str]:
    """The body fields a PATCH changes: those named by ``update_mask``, else those given."""
    unknown = sorted(set(update_mask or []) - allowed)
    if unknown:
        raise ApiError(f"Invalid update_mask: {', '.join(unknown)}; it takes "
                       f"{', '.join(sorted(allowed))}. Nothing was changed.")
    return set(update_mask) if update_mask else body.model_fields_set & allowed


@router.delete("/dags/{dag_id}/dagRuns/{dag_run_id}", status_code=204,
               responses={**NOT_FOUND, **CONFLICT})
def delete_dag_run(request: Request, dag_id: str, dag_run_id: str) -> Response:
    """Delete a finished run with its task instances, tries, history, XComs and notes; an
    unfinished one is refused (409: mark it failed first)."""
    with writing(request) as conn:
        run = reads.run_row(conn, dag_id, dag_run_id)
        if run.state not in RUN_TERMINAL:
            raise Conflict(f"The DagRun with dag_id: `{dag_id}` and run_id: `{dag_run_id}` is "
                           f"{run.state}: statewright deletes finished runs only (mark it "
                           "failed first). Nothing was deleted.")
        db_clean.delete_runs(conn, [run])
    return Response(status_code=204)


@router.patch("/dags/{dag_id}/dagRuns/{dag_run_id}", response_model=v2.DagRunResponse,
              responses={**NOT_FOUND, **CONFLICT})
def patch_dag_run(request: Request, dag_id: str, dag_run_id: str, body: v2.DagRunPatchBody,
                  update_mask: Annotated[list[str] | None, Query()] = None
                  ) -> v2.DagRunResponse:
    """Mark a run ``success`` or ``failed`` (the same control as /api/v1: its unfinished task
    instances are marked too) and/or set its ``note`` (``update_mask=note``; an empty or null
    note clears it)."""
    given = fields_to_update(body, update_mask, {"state", "note"})
    if "state" in given and body.state == "queued":
        raise ApiError("Invalid request: state 'queued' is not served yet (POST "
                       ".../dagRuns/{dag_run_id}/clear queues a run again). Nothing was "
                       "changed.")
    if "state" in given and body.state is not None:
        v1_runs.patch_run(request, dag_id, dag_run_id, v1.DagRunPatch(state=body.state))
    if "note" in given:
        set_run_note(request, dag_id, dag_run_id, body.note)
    return get_dag_run(request, dag_id, dag_run_id)


@router.post("/dags/{dag_id}/dagRuns/{dag_run_id}/clear",
             response_model=v2.ClearTaskInstanceCollection | v2.DagRunResponse,
             responses=NOT_FOUND)
def clear_dag_run(request: Request, dag_id: str, dag_run_id: str, body: v2.DagRunClearBody
                  ) -> v2.ClearTaskInstanceCollection | v2.DagRunResponse:
    """Clear the run's task instances (``only_failed``: the failed ones) so they run again; a
    dry run (the default) answers the task instances that would be cleared, a real one the run,
    queued again."""
    if body.only_new or body.run_on_latest_version:
        raise ApiError("Invalid request: only_new and run_on_latest_version are not "
                       "served yet. Nothing was changed.")
    result = clear_run(request, dag_id, dag_run_id, v1.ClearBody(
        dry_run=body.dry_run, only_failed=body.only_failed))
    if not body.dry_run:
        if body.note is not None:
            set_run_note(request, dag_id, dag_run_id, body.note)
        return get_dag_run(request, dag_id, dag_run_id)
    keys = {(c.task_id, c.map_index) for c in result.changes}
    found = [t for t in lists.run_tis(request, dag_id, dag_run_id)
             if (t.task_id, t.map_index) in keys]
    return v2.ClearTaskInstanceCollection(task_instances=found, total_entries=len(found))


@ti_router.post("/dags/{dag_id}/clearTaskInstances", response_model=v2.TaskInstanceCollection,
                responses={**NOT_FOUND, **CONFLICT})
def post_clear_task_instances(request: Request, dag_id: str, body: v2.ClearTaskInstancesBody
                              ) -> v2.TaskInstanceCollection:
    """Clear task instances of a run (``dag_run_id``) so they run again; ``dry_run`` (the
    default) answers the task instances that would be cleared and changes nothing."""
    if body.dag_run_id is None:
        raise ApiError("Invalid request: give dag_run_id; clearing across a date range "
                         "(start_date/end_date) is not served yet. Nothing was changed.")
    unserved = sorted(k for k in ("start_date", "end_date", "only_running", "include_past",
                                  "include_future", "run_on_latest_version",
                                  "prevent_running_task", "note")
                      if getattr(body, k) not in (None, False))
    if not body.reset_dag_runs:
        unserved.append("reset_dag_runs=false (a cleared finished run is queued again)")
    if unserved:
        raise ApiError(f"Invalid request: {', '.join(unserved)} not served yet (POST "
                         f"/api/v1/dags/{{dag_id}}/dagRuns/{{run_id}}/taskInstances/{{task_id}}"
                         "/clear clears across runs). Nothing was changed.")
    if any(not isinstance(t, str) for t in body.task_ids or []):
        raise ApiError("Invalid request: task_ids as [task_id, map_index] pairs are not "
                         "served yet; give task ids. Nothing was changed.")
    task_ids = [t for t in body.task_ids or [] if isinstance(t, str)]
    result = clear_run(request, dag_id, body.dag_run_id, v1.ClearBody(
        dry_run=body.dry_run, only_failed=body.only_failed, task_ids=task_ids or None,
        include_upstream=body.include_upstream, include_downstream=body.include_downstream))
    keys = {(c.dag_run_id or body.dag_run_id, c.task_id, c.map_index) for c in result.changes}
    found = [t for t in lists.run_tis(request, dag_id, body.dag_run_id)
             if (t.dag_run_id, t.task_id, t.map_index) in keys]
    return v2.TaskInstanceCollection(task_instances=found, total_entries=len(found))


router.include_router(lists.runs_router)  # the run lists (of one DAG or all): lists.py
