"""``/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}``: get (mapped:
``/{map_index}``), mark and note (``PATCH``, ``/dry_run``), a try's log."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import PlainTextResponse

from statewright.api import reads
from statewright.api import schemas as v1
from statewright.api.controls import mark_task
from statewright.api.deps import reading, settings_of
from statewright.api.errors import ApiError
from statewright.api.v2 import lists, xcom
from statewright.api.v2 import schemas as v2
from statewright.api.v2.common import NOT_FOUND
from statewright.api.v2.dag_runs import fields_to_update
from statewright.api.v2.notes import set_task_note

router = APIRouter(tags=["Task Instance"])
xcom_router = APIRouter(tags=["XCom"])
_TI = "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances"
_ONE = _TI + "/{task_id}"
_MI = Annotated[int, Path(ge=-1)]
_MIQ = Annotated[int | None, Query(ge=-1)]
_Mask = Annotated[list[str] | None, Query()]
_LOG_BYTES = 2_000_000
_FULL_LOG_BYTES = 64_000_000


@router.get(_ONE, response_model=v2.TaskInstanceResponse, responses=NOT_FOUND)
def get_task_instance(request: Request, dag_id: str, dag_run_id: str, task_id: str
                      ) -> v2.TaskInstanceResponse:
    """One task instance (map index -1)."""
    return get_mapped_task_instance(request, dag_id, dag_run_id, task_id, -1)


@router.get(_ONE + "/{map_index:int}", response_model=v2.TaskInstanceResponse,
            responses=NOT_FOUND)
def get_mapped_task_instance(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                             map_index: int) -> v2.TaskInstanceResponse:
    """One instance of a mapped task."""
    return lists.one_ti(request, dag_id, dag_run_id, task_id, map_index)


def _patch(request: Request, dag_id: str, run_id: str, task_id: str, map_index: int | None,
           body: v2.PatchTaskInstanceBody, update_mask: list[str] | None, *,
           dry_run: bool = False) -> v2.TaskInstanceCollection:
    """Mark (``new_state``) and/or set the note of the task instance (``map_index`` None: each
    instance of the task); answers the task instances changed, or that would be."""
    given = fields_to_update(body, update_mask, {"new_state", "note"})
    keys: set[tuple[str, str, int]] = set()
    if "new_state" in given and body.new_state is not None:
        if body.new_state not in ("success", "failed"):
            raise ApiError(f"Invalid request: new_state {body.new_state!r} is not served; "
                           "'success' and 'failed' are. Nothing was changed.")
        result = mark_task(request, dag_id, run_id, task_id, v1.TaskInstancePatch(
            new_state=body.new_state, include_upstream=body.include_upstream,
            include_downstream=body.include_downstream, include_past=body.include_past,
            include_future=body.include_future), -1 if map_index is None else map_index,
            dry_run=dry_run)
        keys |= {(c.dag_run_id or run_id, c.task_id, c.map_index) for c in result.changes}
    if "note" in given:
        written = set_task_note(request, dag_id, run_id, task_id, map_index, body.note,
                                dry_run=dry_run)
        keys |= {(run_id, task_id, i) for i in written}
    found = [t for r in sorted({k[0] for k in keys}) for t in lists.run_tis(request, dag_id, r)
             if (t.dag_run_id, t.task_id, t.map_index) in keys]
    return v2.TaskInstanceCollection(task_instances=found, total_entries=len(found))


@router.patch(_ONE, response_model=v2.TaskInstanceCollection, responses=NOT_FOUND)
def patch_task_instance(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                        body: v2.PatchTaskInstanceBody, map_index: _MIQ = None,
                        update_mask: _Mask = None) -> v2.TaskInstanceCollection:
    """Mark a task instance ``success`` or ``failed`` (a running try is killed) and/or set its
    note (without ``map_index``: every instance of a mapped task); answers those changed."""
    return _patch(request, dag_id, dag_run_id, task_id, map_index, body, update_mask)


@router.delete(_ONE, include_in_schema=False, response_model=None)
def delete_task_instance(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                         map_index: Annotated[int, Query(ge=-1)] = -1) -> None:
    """Airflow deletes one task instance; statewright keeps a run's task instances as its
    state machine (the run's outcome, history and grid are made of them), so a task instance
    is removed only with its run: 400 saying so (404 for an unknown one; not served in the
    OpenAPI document; docs/api.md lists it)."""
    with reading(request) as conn:
        ti = reads.get_task_instance(conn, dag_id, dag_run_id, task_id, map_index)
    raise ApiError(f"statewright does not delete one task instance ({task_id!r} of run "
                   f"{dag_run_id!r} is {ti.state}): a run's outcome and history are made of "
                   f"all its task instances. Delete the finished run with DELETE "
                   f"/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}, or clear the task instance "
                   f"(POST /api/v2/dags/{dag_id}/clearTaskInstances). Nothing was deleted.")


@router.patch(_ONE + "/dry_run", response_model=v2.TaskInstanceCollection, responses=NOT_FOUND)
def patch_task_instance_dry_run(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                                body: v2.PatchTaskInstanceBody, map_index: _MIQ = None,
                                update_mask: _Mask = None) -> v2.TaskInstanceCollection:
    """The task instances the same PATCH would change (the same plan); changes nothing."""
    return _patch(request, dag_id, dag_run_id, task_id, map_index, body, update_mask,
                  dry_run=True)


@router.patch(_ONE + "/{map_index:int}", response_model=v2.TaskInstanceCollection,
              responses=NOT_FOUND)
def patch_task_instance_by_map_index(
        request: Request, dag_id: str, dag_run_id: str, task_id: str, map_index: int,
        body: v2.PatchTaskInstanceBody, update_mask: _Mask = None) -> v2.TaskInstanceCollection:
    """Mark and/or set the note of one instance of a mapped task."""
    return _patch(request, dag_id, dag_run_id, task_id, map_index, body, update_mask)


@router.patch(_ONE + "/{map_index:int}/dry_run", response_model=v2.TaskInstanceCollection,
              responses=NOT_FOUND)
def patch_task_instance_dry_run_by_map_index(
        request: Request, dag_id: str, dag_run_id: str, task_id: str, map_index: int,
        body: v2.PatchTaskInstanceBody, update_mask: _Mask = None) -> v2.TaskInstanceCollection:
    """What the same PATCH of one instance of a mapped task would change; changes nothing."""
    return _patch(request, dag_id, dag_run_id, task_id, map_index, body, update_mask,
                  dry_run=True)


def _messages(content: str) -> list[v2.LogMessage]:
    out = []
    for line in content.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("event"), str):
            out.append(v2.LogMessage(event=data["event"], timestamp=data.get("timestamp")))
        else:
            out.append(v2.LogMessage(event=line))
    return out


@router.get(_ONE + "/logs/{try_number}", response_model=v2.TaskLog,
            responses={**NOT_FOUND, 200: {"content": {"text/plain": {
                "schema": {"type": "string"}}}}})
def get_log(
    request: Request, dag_id: str, dag_run_id: str, task_id: str,
    try_number: Annotated[int, Path(ge=0)],
    full_content: Annotated[bool, Query()] = False,
    map_index: Annotated[int, Query()] = -1,
) -> v2.TaskLog | PlainTextResponse:
    """The log of one try: a message per line, or the text itself with ``Accept: text/plain``
    (its last 2 MB; ``full_content``: up to its last 64 MB)."""
    with reading(request) as conn:
        log = reads.task_log(conn, dag_id, dag_run_id, task_id, try_number,
                             logs_folder=settings_of(request).logs_folder,
                             max_bytes=_FULL_LOG_BYTES if full_content else _LOG_BYTES,
                             map_index=map_index)
    accept = request.headers.get("accept", "")
    if "text/plain" in accept and "application/json" not in accept:
        return PlainTextResponse(log.content)
    return v2.TaskLog(content=_messages(log.content), continuation_token=None)


# the task instance and XCom lists (of one run or all): lists.py; one XCom entry: xcom.py
router.include_router(lists.tis_router)
xcom_router.include_router(lists.xcom_router)
xcom_router.include_router(xcom.router)
