"""``/api/v2`` human-in-the-loop details: the requests for input of a run's task instances
(``~`` for every DAG or run), one request, and answering it (``PATCH``), through the routes
of ``/api/v1/hitlDetails``: the same permissions, checks and audit."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse

from statewright.api.deps import Offset
from statewright.api.errors import NotFound
from statewright.api.routers import hitl as v1_hitl
from statewright.api.v2 import schemas_system as v2
from statewright.api.v2 import task_instances as v2_tis
from statewright.api.v2 import tries as v2_tries
from statewright.api.v2.common import CONFLICT, NOT_FOUND, PageLimit
from statewright.api.v2.row_filters import OrderBy, Pattern, Prefix, every, matches, order
from statewright.api.v2.row_filters import When as _When
from statewright.core.clock import utcnow

router = APIRouter(tags=["HumanInTheLoop"])
_TI = "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/{map_index}/hitlDetails"
_MI = Annotated[int, Path(ge=-1, le=2**31 - 1)]
_Strings = Annotated[list[str] | None, Query()]

_ORDER = {"ti_id": "created_at", "subject": "subject", "responded_at": "responded_at",
          "created_at": "created_at", "responded_by_user_id": "responded_by",
          "responded_by_user_name": "responded_by", "dag_id": "dag_id", "run_id": "run_id",
          "task_display_name": "task_id", "run_after": "created_at", "rendered_map_index":
          "map_index", "task_instance_operator": "task_id", "task_instance_state": "state"}


def _who(stored: str | None) -> str | None:
    """The responder's username (the audit actor ``user:<name>`` is stored)."""
    return stored.removeprefix("user:") if stored else None


def _user(stored: str | None) -> v2.HITLUser | None:
    name = _who(stored)
    return v2.HITLUser(id=name, name=name) if name else None


def _fields(d: v1_hitl.HITLDetail) -> dict[str, Any]:
    """What Airflow's detail and its history share, but the task instance."""
    return {"options": d.options, "subject": d.subject, "body": d.body,
            "defaults": d.defaults, "multiple": d.multiple, "params": d.params,
            "assigned_users": [v2.HITLUser(id=r, name=r) for r in d.respondents or []],
            "created_at": d.created_at, "responded_by_user": _user(d.responded_by),
            "responded_at": d.responded_at, "chosen_options": d.chosen_options,
            "params_input": d.params_input, "response_received": d.response_received}


def _detail(request: Request, d: v1_hitl.HITLDetail) -> v2.HITLDetail:
    t = d.task_instance
    ti = v2_tis.get_mapped_task_instance(request, t.dag_id, t.dag_run_id, t.task_id,
                                         t.map_index)
    return v2.HITLDetail(task_instance=ti, **_fields(d))


def _row(d: v1_hitl.HITLDetail) -> dict[str, Any]:
    t = d.task_instance
    return {"subject": d.subject, "body": d.body, "created_at": d.created_at,
            "responded_at": d.responded_at, "responded_by": _who(d.responded_by),
            "dag_id": t.dag_id, "run_id": t.dag_run_id, "task_id": t.task_id,
            "map_index": t.map_index, "state": t.state, "detail": d}


def _within(value: datetime, gte: datetime | None, gt: datetime | None,
            lte: datetime | None, lt: datetime | None) -> bool:
    return not ((gte and value < gte) or (gt and value <= gt) or (lte and value > lte)
                or (lt and value >= lt))


@router.get("/dags/{dag_id}/dagRuns/{dag_run_id}/hitlDetails",
            response_model=v2.HITLDetailCollection)
def get_hitl_details(
    request: Request, dag_id: str, dag_run_id: str, limit: PageLimit = 50, offset: Offset = 0,
    order_by: OrderBy = None, dag_id_pattern: Pattern = None, dag_id_prefix_pattern: Prefix = None,
    task_id: Annotated[str | None, Query()] = None, task_id_pattern: Pattern = None,
    task_id_prefix_pattern: Prefix = None,
    map_index: Annotated[int | None, Query(ge=-1, le=2**31 - 1)] = None,
    state: _Strings = None, response_received: Annotated[bool | None, Query()] = None,
    responded_by_user_id: _Strings = None, responded_by_user_name: _Strings = None,
    subject_search: Pattern = None, body_search: Pattern = None, created_at_gte: _When = None,
    created_at_gt: _When = None, created_at_lte: _When = None, created_at_lt: _When = None,
) -> v2.HITLDetailCollection:
    """The requests for input of a run's task instances (``~``: of every run, or DAG)."""
    fetch = partial(v1_hitl.list_hitl_details, request, None if dag_id == "~" else dag_id,
                    None if dag_run_id == "~" else dag_run_id, task_id, response_received)
    users = set(responded_by_user_id or []) | set(responded_by_user_name or [])
    rows = [r for r in map(_row, every(fetch, "hitl_details"))
            if matches(r["dag_id"], dag_id_pattern, dag_id_prefix_pattern)
            and matches(r["task_id"], task_id_pattern, task_id_prefix_pattern)
            and matches(r["subject"], subject_search) and matches(r["body"], body_search)
            and (map_index is None or r["map_index"] == map_index)
            and (not state or r["state"] in state)
            and (not users or r["responded_by"] in users)
            and _within(r["created_at"], created_at_gte, created_at_gt, created_at_lte,
                        created_at_lt)]
    rows = order(rows, order_by, _ORDER, "ti_id")
    return v2.HITLDetailCollection(
        hitl_details=[_detail(request, r["detail"]) for r in rows[offset:offset + limit]],
        total_entries=len(rows))


@router.get(_TI, response_model=v2.HITLDetail, responses=NOT_FOUND)
def get_hitl_detail(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                    map_index: _MI) -> v2.HITLDetail:
    """The request for input of one task instance (map index -1 when not mapped)."""
    return _detail(request, v1_hitl.get_mapped_hitl_detail(request, dag_id, dag_run_id,
                                                           task_id, map_index))


@router.get(_TI + "/tries/{try_number}", response_model=v2.HITLDetailHistory,
            responses=NOT_FOUND)
def get_hitl_detail_try_detail(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                               map_index: _MI, try_number: Annotated[int, Path(ge=1)]
                               ) -> v2.HITLDetailHistory:
    """The request for input of one try of a task instance. statewright keeps the request of
    the latest try that asked (a later try's request replaces the earlier): another try
    answers 404 naming the try it keeps."""
    d = v1_hitl.get_mapped_hitl_detail(request, dag_id, dag_run_id, task_id, map_index)
    kept = d.task_instance.try_number
    if try_number != kept:
        raise NotFound(f"Task instance {task_id!r} of DAG {dag_id!r} run {dag_run_id!r} has "
                       f"no request for input of try {try_number}: statewright keeps the "
                       f"latest try's request (try {kept}).")
    tries = v2_tries.tries_of(request, dag_id, dag_run_id, task_id, map_index)
    return v2.HITLDetailHistory(task_instance=v2_tries.one_try(tries, try_number, task_id),
                                **_fields(d))


@router.patch(_TI, response_model=v2.HITLDetailResponse,
              responses={**NOT_FOUND, **CONFLICT, 403: {"description": "Forbidden"}})
def update_hitl_detail(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                       map_index: _MI, body: v2.UpdateHITLDetailPayload) -> Any:
    """Answer a request for input: the task instance resumes with the chosen options and the
    form's values (409 when it is not awaiting input; 403 for a person it does not name)."""
    got = v1_hitl.respond_mapped(request, dag_id, dag_run_id, task_id, map_index,
                                 v1_hitl.HITLResponseBody(chosen_options=body.chosen_options,
                                                          params_input=body.params_input))
    if isinstance(got, JSONResponse):
        return got
    who = _user(got.responded_by) or _user(request.state.identity.username)
    assert who is not None
    return v2.HITLDetailResponse(responded_by=who,
                                 responded_at=got.responded_at or utcnow(),
                                 chosen_options=got.chosen_options or body.chosen_options,
                                 params_input=got.params_input)
