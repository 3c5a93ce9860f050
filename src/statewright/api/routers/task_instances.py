"""Task instances of a run: list, detail with tries, state history, per-try logs, clear, mark.

A mapped task's instances are addressed ``/taskInstances/{task_id}/{map_index}`` (each route
also answers with the map index in the path; without it, map index -1: an unmapped task, or a
mapped one not expanded yet); ``/taskInstances/{task_id}/listMapped`` lists them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import PlainTextResponse

from statewright.api import controls, reads
from statewright.api import schemas as s
from statewright.api.deps import engine_of, reading, settings_of
from statewright.api.routers.secrets import cipher_of
from statewright.core.errors import StatewrightError
from statewright.services.secrets.admin import register_stored_secrets

router = APIRouter(tags=["Task instances"])
_TI = "/dags/{dag_id}/dagRuns/{run_id}/taskInstances"
_ONE = _TI + "/{task_id}"
_MAPPED = _TI + "/{task_id}/{map_index:int}"
_MI = Annotated[int, Path(ge=0, description="The map index of a mapped task's instance.")]
_LOG_BYTES = Annotated[int, Query(ge=1, le=50_000_000,
                                  description="Return at most the last N bytes.")]


@router.get(_TI, response_model=s.TaskInstanceCollection)
def list_task_instances(request: Request, dag_id: str, run_id: str
                        ) -> s.TaskInstanceCollection:
    """Every task instance of the run, in the DAG's order."""
    with reading(request) as conn:
        return reads.list_task_instances(conn, dag_id, run_id)


@router.get(_ONE + "/listMapped", response_model=s.TaskInstanceCollection)
def list_mapped_task_instances(request: Request, dag_id: str, run_id: str, task_id: str
                               ) -> s.TaskInstanceCollection:
    """Every instance of one task of the run, by map index (a mapped task's expanded
    instances; before expansion, or for an unmapped task, the one of map index -1)."""
    with reading(request) as conn:
        return reads.list_mapped_task_instances(conn, dag_id, run_id, task_id)


@router.get(_MAPPED, response_model=s.TaskInstanceDetail)
def get_mapped_task_instance(request: Request, dag_id: str, run_id: str, task_id: str,
                             map_index: _MI) -> s.TaskInstanceDetail:
    """One task instance and its tries (one per row of task_instance_history, plus the try in
    progress); a deferred one's trigger: its class, what it waits for, its timeout."""
    try:
        cipher = cipher_of(request)
    except StatewrightError:
        cipher = None  # the trigger is described without its arguments
    with reading(request) as conn:
        return reads.get_task_instance(conn, dag_id, run_id, task_id, map_index,
                                       trigger_cipher=cipher)


@router.get(_ONE, response_model=s.TaskInstanceDetail)
def get_task_instance(request: Request, dag_id: str, run_id: str, task_id: str
                      ) -> s.TaskInstanceDetail:
    """One task instance (map index -1) and its tries."""
    return get_mapped_task_instance(request, dag_id, run_id, task_id, -1)


@router.get(_MAPPED + "/history", response_model=s.TransitionCollection)
def mapped_task_instance_history(request: Request, dag_id: str, run_id: str, task_id: str,
                                 map_index: _MI) -> s.TransitionCollection:
    """Every state change of the task instance: from, to, name, message, actor, try, time."""
    with reading(request) as conn:
        return reads.task_instance_history(conn, dag_id, run_id, task_id, map_index)


@router.get(_ONE + "/history", response_model=s.TransitionCollection)
def task_instance_history(request: Request, dag_id: str, run_id: str, task_id: str
                          ) -> s.TransitionCollection:
    """Every state change of the task instance (map index -1)."""
    return mapped_task_instance_history(request, dag_id, run_id, task_id, -1)


@router.get(_MAPPED + "/xcomEntries", response_model=s.XComCollection)
def mapped_xcom_entries(request: Request, dag_id: str, run_id: str, task_id: str,
                        map_index: _MI) -> s.XComCollection:
    """What the task instance stored: its return value (key ``return_value``) and the values
    it pushed under keys of its own (``ti.xcom_push``)."""
    try:
        cipher = cipher_of(request)  # to read the stored secrets: they are shown masked
    except StatewrightError:
        cipher = None  # without a key every value of the task instance is hidden
    if cipher is not None:
        register_stored_secrets(engine_of(request), cipher)
    with reading(request) as conn:
        return reads.xcom_entries(conn, dag_id, run_id, task_id, map_index, cipher=cipher)


@router.get(_ONE + "/xcomEntries", response_model=s.XComCollection)
def xcom_entries(request: Request, dag_id: str, run_id: str, task_id: str) -> s.XComCollection:
    """What the task instance (map index -1) stored."""
    return mapped_xcom_entries(request, dag_id, run_id, task_id, -1)


@router.get(_MAPPED + "/logs/{try_number}", response_model=s.TaskLog,
            responses={200: {"content": {"text/plain": {}}}})
def mapped_task_log(request: Request, dag_id: str, run_id: str, task_id: str, map_index: _MI,
                    try_number: int, max_bytes: _LOG_BYTES = 2_000_000
                    ) -> s.TaskLog | PlainTextResponse:
    """The log file of one try (JSON; the bare text with ``Accept: text/plain``)."""
    with reading(request) as conn:
        log = reads.task_log(conn, dag_id, run_id, task_id, try_number,
                             logs_folder=settings_of(request).logs_folder, max_bytes=max_bytes,
                             map_index=map_index)
    accept = request.headers.get("accept", "")
    if "text/plain" in accept and "application/json" not in accept:
        return PlainTextResponse(log.content)
    return log


@router.get(_ONE + "/logs/{try_number}", response_model=s.TaskLog,
            responses={200: {"content": {"text/plain": {}}}})
def task_log(request: Request, dag_id: str, run_id: str, task_id: str, try_number: int,
             max_bytes: _LOG_BYTES = 2_000_000) -> s.TaskLog | PlainTextResponse:
    """The log file of one try of the task instance (map index -1)."""
    return mapped_task_log(request, dag_id, run_id, task_id, -1, try_number, max_bytes)


@router.post(_MAPPED + "/clear", response_model=s.ControlResult)
def clear_mapped_task_instance(request: Request, dag_id: str, run_id: str, task_id: str,
                               map_index: _MI, body: s.TaskClearBody) -> s.ControlResult:
    """Clear one instance of a mapped task (and, if asked, the tasks up or down the graph)."""
    return controls.clear_task(request, dag_id, run_id, task_id, body, map_index)


@router.post(_ONE + "/clear", response_model=s.ControlResult)
def clear_task_instance(request: Request, dag_id: str, run_id: str, task_id: str,
                        body: s.TaskClearBody) -> s.ControlResult:
    """Clear the task instance (and, if asked, those up or down the graph) so it runs again;
    every instance of a mapped task."""
    return controls.clear_task(request, dag_id, run_id, task_id, body)


@router.patch(_MAPPED + "/dry_run", response_model=s.ControlResult)
def mark_mapped_task_instance_dry_run(request: Request, dag_id: str, run_id: str, task_id: str,
                                      map_index: _MI, body: s.TaskInstancePatch
                                      ) -> s.ControlResult:
    """What marking one instance of a mapped task would change; changes nothing."""
    return controls.mark_task(request, dag_id, run_id, task_id, body, map_index, dry_run=True)


@router.patch(_ONE + "/dry_run", response_model=s.ControlResult)
def mark_task_instance_dry_run(request: Request, dag_id: str, run_id: str, task_id: str,
                               body: s.TaskInstancePatch) -> s.ControlResult:
    """What marking the task instance (with the same body as the PATCH) would change: every
    task instance, in this run and, with include_past / include_future, in others. Changes
    nothing."""
    return controls.mark_task(request, dag_id, run_id, task_id, body, dry_run=True)


@router.patch(_MAPPED, response_model=s.TaskInstanceDetail)
def mark_mapped_task_instance(request: Request, dag_id: str, run_id: str, task_id: str,
                              map_index: _MI, body: s.TaskInstancePatch
                              ) -> s.TaskInstanceDetail:
    """Mark one instance of a mapped task ``success`` or ``failed``."""
    controls.mark_task(request, dag_id, run_id, task_id, body, map_index)
    return get_mapped_task_instance(request, dag_id, run_id, task_id, map_index)


@router.patch(_ONE, response_model=s.TaskInstanceDetail)
def mark_task_instance(request: Request, dag_id: str, run_id: str, task_id: str,
                       body: s.TaskInstancePatch) -> s.TaskInstanceDetail:
    """Mark the task instance ``success`` or ``failed`` (a running try is killed); every
    instance of a mapped task."""
    controls.mark_task(request, dag_id, run_id, task_id, body)
    with reading(request) as conn:
        return reads.get_task_instance(conn, dag_id, run_id, task_id, any_index=True)
