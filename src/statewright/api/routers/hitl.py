"""Human in the loop: the requests of task instances awaiting input, and responding to them.

Airflow's routes: ``GET /hitlDetails`` lists the requests ("required actions");
``GET|PATCH .../taskInstances/{task_id}[/{map_index}]/hitlDetails`` reads one or responds
(``POST`` responds too). A response that finds the task instance not awaiting input (answered,
moved on, or answered by someone else a moment before) is 409, one that fails the options or the
params' schemas 422 naming the field, one from a person the request does not name 403; none
writes anything.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from statewright.api.auth.credentials import actor_of
from statewright.api.deps import Offset, engine_of, reading
from statewright.api.errors import Conflict, NotFound
from statewright.api.limits import check_input
from statewright.core.auth import Role
from statewright.core.clock import utcnow
from statewright.db.repositories import hitl as hitl_repo
from statewright.services import hitl as hitl_service

router = APIRouter(tags=["Human in the loop"])
_ONE = "/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/hitlDetails"
_MAPPED = "/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/{map_index:int}/hitlDetails"
_MI = Annotated[int, Path(ge=0, description="The map index of a mapped task's instance.")]


class HITLResponseBody(BaseModel):
    """A person's response: the option(s) chosen and the form's values."""

    model_config = ConfigDict(extra="forbid")
    chosen_options: list[str] = Field(min_length=1)
    params_input: dict[str, Any] = Field(default_factory=dict)


class HITLTaskInstance(BaseModel):
    dag_id: str
    dag_run_id: str
    task_id: str
    map_index: int
    state: str
    try_number: int


class HITLDetail(BaseModel):
    """One request for input and, once given, its response."""

    task_instance: HITLTaskInstance
    subject: str
    body: str | None
    options: list[str]
    multiple: bool
    defaults: list[str] | None
    params: dict[str, Any]
    respondents: list[str] | None
    created_at: datetime
    timeout_at: datetime | None
    response_received: bool
    chosen_options: list[str] | None
    params_input: dict[str, Any]
    responded_by: str | None
    responded_at: datetime | None
    timed_out: bool


class HITLDetailCollection(BaseModel):
    hitl_details: list[HITLDetail]
    total_entries: int


def detail_of(row: Any) -> HITLDetail:
    return HITLDetail(
        task_instance=HITLTaskInstance(dag_id=row.dag_id, dag_run_id=row.run_id,
                                       task_id=row.task_id, map_index=row.map_index,
                                       state=row.state, try_number=row.try_number),
        subject=row.subject, body=row.body, options=list(row.options), multiple=row.multiple,
        defaults=row.defaults, params=dict(row.params or {}), respondents=row.respondents,
        created_at=row.created_at, timeout_at=row.timeout_at,
        response_received=row.responded_at is not None, chosen_options=row.chosen_options,
        params_input=dict(row.params_input or {}), responded_by=row.responded_by,
        responded_at=row.responded_at, timed_out=bool(row.timed_out))


@router.get("/hitlDetails", response_model=HITLDetailCollection)
def list_hitl_details(
    request: Request,
    dag_id: str | None = None,
    dag_run_id: str | None = None,
    task_id: str | None = None,
    response_received: Annotated[bool | None, Query(
        description="false: only the requests still awaiting their response")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Offset = 0,
) -> HITLDetailCollection:
    """The requests for input ("required actions"), newest first."""
    pending = None if response_received is None else not response_received
    with reading(request) as conn:
        rows = hitl_repo.listing(conn, dag_id=dag_id, run_id=dag_run_id, task_id=task_id,
                                 pending=pending, limit=limit, offset=offset)
        total = hitl_repo.count(conn, dag_id=dag_id, run_id=dag_run_id, task_id=task_id,
                                pending=pending)
    return HITLDetailCollection(hitl_details=[detail_of(r) for r in rows], total_entries=total)


@router.get(_MAPPED, response_model=HITLDetail)
def get_mapped_hitl_detail(request: Request, dag_id: str, run_id: str, task_id: str,
                           map_index: _MI) -> HITLDetail:
    """The request of one instance of a mapped task, and its response."""
    with reading(request) as conn:
        try:
            return detail_of(hitl_service.find_request(conn, dag_id, run_id, task_id,
                                                       map_index))
        except hitl_service.RequestNotFound as exc:
            raise NotFound(str(exc)) from None


@router.get(_ONE, response_model=HITLDetail)
def get_hitl_detail(request: Request, dag_id: str, run_id: str, task_id: str) -> HITLDetail:
    """The request of the task instance (map index -1), and its response."""
    return get_mapped_hitl_detail(request, dag_id, run_id, task_id, -1)


def _respond(request: Request, dag_id: str, run_id: str, task_id: str, map_index: int,
             body: HITLResponseBody) -> HITLDetail | JSONResponse:
    check_input(request, body.params_input, "params_input")
    check_input(request, body.chosen_options, "chosen_options")
    identity = request.state.identity
    role = Role(identity.role)
    roles = [r.value for r in Role][: list(Role).index(role) + 1]  # a role holds those below
    responder = hitl_service.Responder(identity.username, roles, actor_of(request))
    try:
        row = hitl_service.respond(
            engine_of(request), dag_id, run_id, task_id, chosen_options=body.chosen_options,
            params_input=body.params_input, responder=responder, now=utcnow(),
            map_index=map_index)
    except hitl_service.RequestNotFound as exc:
        raise NotFound(str(exc)) from None
    except hitl_service.NotAwaitingInput as exc:
        raise Conflict(str(exc)) from None
    except hitl_service.NotAllowed as exc:
        return JSONResponse({"detail": str(exc)}, status_code=403)
    except hitl_service.InvalidResponse as exc:
        return JSONResponse({"detail": str(exc), "errors": [
            {"field": f, "msg": m} for f, m in exc.problems]}, status_code=422)
    return detail_of(row)


_RESPONSES: dict[int | str, dict[str, Any]] = {
    403: {"description": "The request names other respondents."},
    409: {"description": "The task instance is not awaiting input."},
    422: {"description": "The response fails the options or the params (field named)."},
}


@router.patch(_MAPPED, response_model=HITLDetail, responses=_RESPONSES)
def respond_mapped(request: Request, dag_id: str, run_id: str, task_id: str, map_index: _MI,
                   body: HITLResponseBody) -> Any:
    """Respond to one instance of a mapped task: it resumes with the response."""
    return _respond(request, dag_id, run_id, task_id, map_index, body)


@router.patch(_ONE, response_model=HITLDetail, responses=_RESPONSES)
def respond(request: Request, dag_id: str, run_id: str, task_id: str,
            body: HITLResponseBody) -> Any:
    """Respond to the task instance (map index -1): it resumes with the response."""
    return _respond(request, dag_id, run_id, task_id, -1, body)


@router.post(_ONE, response_model=HITLDetail, responses=_RESPONSES)
def respond_post(request: Request, dag_id: str, run_id: str, task_id: str,
                 body: HITLResponseBody) -> Any:
    """Respond to the task instance (as PATCH)."""
    return _respond(request, dag_id, run_id, task_id, -1, body)


@router.post(_MAPPED, response_model=HITLDetail, responses=_RESPONSES)
def respond_mapped_post(request: Request, dag_id: str, run_id: str, task_id: str,
                        map_index: _MI, body: HITLResponseBody) -> Any:
    """Respond to one instance of a mapped task (as PATCH)."""
    return _respond(request, dag_id, run_id, task_id, map_index, body)
