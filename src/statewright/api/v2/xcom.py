"""``/api/v2/…/taskInstances/{task_id}/xcomEntries/{xcom_key}``: one XCom entry with its value
(read as ``/api/v1`` shows it, secrets masked), and entries written, changed or deleted by hand
(``POST …/xcomEntries``, ``PATCH``/``DELETE …/{xcom_key}``; operators and admins), stored as a
try's pushed values are."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel

from statewright.api import reads
from statewright.api import schemas as v1
from statewright.api.deps import reading, writing
from statewright.api.errors import Conflict, NotFound
from statewright.api.routers import task_instances as v1_tis
from statewright.api.v2 import adapt
from statewright.api.v2 import schemas as v2
from statewright.api.v2.common import CONFLICT, NOT_FOUND, display_name
from statewright.core.clock import utcnow
from statewright.db.repositories import xcoms as xcom_repo

router = APIRouter(tags=["XCom"])
_ENTRIES = "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/xcomEntries"
_MI = Annotated[int, Query(ge=-1)]


class XComCreateBody(BaseModel):
    key: str
    value: Any
    map_index: int = -1


class XComUpdateBody(BaseModel):
    value: Any
    map_index: int = -1


def _one(request: Request, dag_id: str, run_id: str, task_id: str, map_index: int
         ) -> tuple[v1.TaskInstance, v1.DagRun, str]:
    with reading(request) as conn:
        ti = reads.get_task_instance(conn, dag_id, run_id, task_id, map_index)
        run = reads.get_run(conn, dag_id, run_id)
    return ti, run, display_name(request, dag_id)


def _entries(request: Request, dag_id: str, run_id: str, task_id: str, map_index: int
             ) -> tuple[list[v1.XComEntry], v1.TaskInstance, v1.DagRun, str]:
    entries = v1_tis.mapped_xcom_entries(request, dag_id, run_id, task_id, map_index)
    ti, run, name = _one(request, dag_id, run_id, task_id, map_index)
    return entries.xcom_entries, ti, run, name


def _missing(key: str) -> NotFound:
    return NotFound(f"XCom entry with key: `{key}` not found")


@router.get(_ENTRIES + "/{xcom_key}", response_model=v2.XComEntryNative, responses=NOT_FOUND)
def get_xcom_entry(
    request: Request, dag_id: str, task_id: str, dag_run_id: str, xcom_key: str,
    map_index: _MI = -1,
    deserialize: Annotated[bool, Query()] = False,
    stringify: Annotated[bool, Query()] = False,
) -> v2.XComEntry:
    """One XCom entry with its value (``stringify``: as a string)."""
    entries, ti, run, name = _entries(request, dag_id, dag_run_id, task_id, map_index)
    entry = next((e for e in entries if e.key == xcom_key), None)
    if entry is None:
        raise _missing(xcom_key)
    value: Any = entry.value
    if stringify:
        value = value if isinstance(value, str) else json.dumps(value, default=str)
    return adapt.xcom(entry, ti, run, name, value, with_value=True)


def _store(request: Request, dag_id: str, run_id: str, task_id: str, map_index: int,
           key: str, value: Any, *, new: bool) -> None:
    from statewright.sdk import serde

    with writing(request) as conn:
        run, row = reads.ti_row(conn, dag_id, run_id, task_id, map_index)
        there = any(e.key == key for e in xcom_repo.entries(conn, run.id, task_id,
                                                            row.map_index))
        if new and there:
            raise Conflict(f"The XCom with key: `{key}` with mentioned task instance already "
                           "exists.")
        if not new and not there:
            raise _missing(key)
        xcom_repo.set_values(conn, [(run.id, task_id, row.map_index, key,
                                     serde.serialize(value))], utcnow())


@router.post(_ENTRIES, response_model=v2.XComEntryNative, status_code=201,
             responses={**NOT_FOUND, **CONFLICT})
def create_xcom_entry(request: Request, dag_id: str, task_id: str, dag_run_id: str,
                      body: XComCreateBody) -> v2.XComEntry:
    """Store a new value under ``key`` for the task instance (409 if it has one)."""
    _store(request, dag_id, dag_run_id, task_id, body.map_index, body.key, body.value,
           new=True)
    return get_xcom_entry(request, dag_id, task_id, dag_run_id, body.key, body.map_index)


@router.patch(_ENTRIES + "/{xcom_key}", response_model=v2.XComEntryNative, responses=NOT_FOUND)
def update_xcom_entry(request: Request, dag_id: str, task_id: str, dag_run_id: str,
                      xcom_key: str, body: XComUpdateBody) -> v2.XComEntry:
    """Replace the value stored under ``xcom_key`` (404 if there is none)."""
    _store(request, dag_id, dag_run_id, task_id, body.map_index, xcom_key, body.value,
           new=False)
    return get_xcom_entry(request, dag_id, task_id, dag_run_id, xcom_key, body.map_index)


@router.delete(_ENTRIES + "/{xcom_key}", status_code=204, responses=NOT_FOUND)
def delete_xcom_entry(request: Request, dag_id: str, task_id: str, dag_run_id: str,
                      xcom_key: str, map_index: _MI = -1) -> Response:
    """Delete the value stored under ``xcom_key`` (404 if there is none)."""
    with writing(request) as conn:
        run, row = reads.ti_row(conn, dag_id, dag_run_id, task_id, map_index)
        if not xcom_repo.delete_key(conn, run.id, task_id, row.map_index, xcom_key):
            raise _missing(xcom_key)
    return Response(status_code=204)
