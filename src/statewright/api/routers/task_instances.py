"""Task instances of a run: list, detail with tries, state history, per-try logs, clear, mark."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import PlainTextResponse

from statewright.api import controls, reads
from statewright.api import schemas as s
from statewright.api.deps import engine_of, reading, settings_of
from statewright.api.routers.secrets import cipher_of
from statewright.core.errors import StatewrightError
from statewright.services.secrets.admin import register_stored_secrets

router = APIRouter(tags=["Task instances"])
_TI = "/dags/{dag_id}/dagRuns/{run_id}/taskInstances"


@router.get(_TI, response_model=s.TaskInstanceCollection)
def list_task_instances(request: Request, dag_id: str, run_id: str
                        ) -> s.TaskInstanceCollection:
    """Every task instance of the run, in the DAG's order."""
    with reading(request) as conn:
        return reads.list_task_instances(conn, dag_id, run_id)


@router.get(_TI + "/{task_id}", response_model=s.TaskInstanceDetail)
def get_task_instance(request: Request, dag_id: str, run_id: str, task_id: str
                      ) -> s.TaskInstanceDetail:
    """One task instance and its tries (one per row of task_instance_history, plus the try in
    progress)."""
    with reading(request) as conn:
        return reads.get_task_instance(conn, dag_id, run_id, task_id)


@router.get(_TI + "/{task_id}/history", response_model=s.TransitionCollection)
def task_instance_history(request: Request, dag_id: str, run_id: str, task_id: str
                          ) -> s.TransitionCollection:
    """Every state change of the task instance: from, to, name, message, actor, try, time."""
    with reading(request) as conn:
        return reads.task_instance_history(conn, dag_id, run_id, task_id)


@router.get(_TI + "/{task_id}/xcomEntries", response_model=s.XComCollection)
def xcom_entries(request: Request, dag_id: str, run_id: str, task_id: str) -> s.XComCollection:
    """What the task instance stored: its return value (key ``return_value``) and the values
    it pushed under keys of its own (``ti.xcom_push``)."""
    try:
        cipher = cipher_of(request)  # to read the stored secrets: they are shown masked
    except StatewrightError:
        cipher = None  # without a key every value of the task instance is hidden
    if cipher is not None:
        register_stored_secrets(engine_of(request), cipher)
    with reading(request) as conn:
        return reads.xcom_entries(conn, dag_id, run_id, task_id, cipher=cipher)


@router.get(_TI + "/{task_id}/logs/{try_number}", response_model=s.TaskLog,
            responses={200: {"content": {"text/plain": {}}}})
def task_log(
    request: Request, dag_id: str, run_id: str, task_id: str, try_number: int,
    max_bytes: Annotated[int, Query(ge=1, le=50_000_000,
                                    description="Return at most the last N bytes.")] = 2_000_000,
) -> s.TaskLog | PlainTextResponse:
    """The log file of one try (JSON; the bare text with ``Accept: text/plain``)."""
    with reading(request) as conn:
        log = reads.task_log(conn, dag_id, run_id, task_id, try_number,
                             logs_folder=settings_of(request).logs_folder, max_bytes=max_bytes)
    accept = request.headers.get("accept", "")
    if "text/plain" in accept and "application/json" not in accept:
        return PlainTextResponse(log.content)
    return log


@router.post(_TI + "/{task_id}/clear", response_model=s.ControlResult)
def clear_task_instance(request: Request, dag_id: str, run_id: str, task_id: str,
                        body: s.TaskClearBody) -> s.ControlResult:
    """Clear the task instance (and, if asked, those up or down the graph) so it runs again."""
    return controls.clear_task(request, dag_id, run_id, task_id, body)


@router.patch(_TI + "/{task_id}", response_model=s.TaskInstanceDetail)
def mark_task_instance(request: Request, dag_id: str, run_id: str, task_id: str,
                       body: s.TaskInstancePatch) -> s.TaskInstanceDetail:
    """Mark the task instance ``success`` or ``failed`` (a running try is killed)."""
    controls.mark_task(request, dag_id, run_id, task_id, body)
    with reading(request) as conn:
        return reads.get_task_instance(conn, dag_id, run_id, task_id)
