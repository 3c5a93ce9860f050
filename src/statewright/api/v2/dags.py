"""``/api/v2/dags``: list, get, pause/unpause; ``/api/v2/importErrors``."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from statewright.api import reads
from statewright.api import schemas as v1
from statewright.api.deps import Offset, reading
from statewright.api.errors import ApiError
from statewright.api.routers import dag_runs as v1_runs
from statewright.api.routers import dags as v1_dags
from statewright.api.v2 import adapt, tasks
from statewright.api.v2 import schemas as v2
from statewright.api.v2.common import NOT_FOUND, PageLimit
from statewright.db.repositories import dags as dag_repo

router = APIRouter(tags=["DAG"])
errors_router = APIRouter(tags=["Import Error"])


def _owners(request: Request, dag_ids: list[str]) -> dict[str, list[str]]:
    with reading(request) as conn:
        found = dag_repo.get_serialized_many(conn, dag_ids)
    return {d: list((found[d][1] if d in found else {}).get("owners") or []) for d in dag_ids}


@router.get("/dags", response_model=v2.DagCollection)
def get_dags(
    request: Request,
    limit: PageLimit = 50,
    offset: Offset = 0,
    tags: Annotated[list[str] | None, Query()] = None,
    dag_id_pattern: Annotated[str | None, Query()] = None,
    paused: Annotated[bool | None, Query()] = None,
) -> v2.DagCollection:
    """DAGs ordered by id (``tags``: any of them; ``dag_id_pattern``: part of the id)."""
    page = v1_dags.list_dags(request, limit=limit, offset=offset, paused=paused, tags=tags,
                             dag_id_pattern=(dag_id_pattern or "").strip("%") or None)
    owners = _owners(request, [d.dag_id for d in page.dags])
    return v2.DagCollection(dags=[adapt.dag(d, owners[d.dag_id]) for d in page.dags],
                            total_entries=page.total_entries)


def _one(request: Request, dag_id: str) -> v2.DagResponse:
    with reading(request) as conn:
        detail = reads.get_dag(conn, dag_id)
    return adapt.dag(detail, _owners(request, [dag_id])[dag_id])


@router.get("/dags/{dag_id}", response_model=v2.DagResponse, responses=NOT_FOUND)
def get_dag(request: Request, dag_id: str) -> v2.DagResponse:
    """One DAG."""
    return _one(request, dag_id)


@router.patch("/dags/{dag_id}", response_model=v2.DagResponse, responses=NOT_FOUND)
def patch_dag(request: Request, dag_id: str, body: v2.DagPatchBody,
              update_mask: Annotated[list[str] | None, Query()] = None) -> v2.DagResponse:
    """Pause (``{"is_paused": true}``) or unpause a DAG (the same change as /api/v1)."""
    v1_dags.patch_dag(request, dag_id, v1.DagPatch(is_paused=body.is_paused))
    return _one(request, dag_id)


@router.delete("/dags/{dag_id}", responses=NOT_FOUND)
def delete_dag(request: Request, dag_id: str) -> dict[str, Any]:
    """Not offered: answers 400 saying why (a DAG is kept while its file is in the DAGs
    folder; its finished runs can be deleted one by one)."""
    _one(request, dag_id)  # 404 for an unknown DAG
    raise ApiError(f"statewright does not delete DAG {dag_id!r}: a DAG is kept while its file "
                   "is in the DAGs folder (remove the file and the DAG goes stale). Delete its "
                   "finished runs with DELETE /api/v2/dags/{dag_id}/dagRuns/{dag_run_id} or "
                   "`statewright db clean`. Nothing was deleted.")


def _duration(seconds: Any) -> str | None:
    """A dagrun_timeout as Airflow answers it (ISO 8601 duration)."""
    if seconds is None:
        return None
    try:
        return f"PT{float(seconds):g}S"
    except (TypeError, ValueError):
        return None


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


@router.get("/dags/{dag_id}/details", response_model=v2.DagDetailsResponse, responses=NOT_FOUND)
def get_dag_details(request: Request, dag_id: str) -> v2.DagDetailsResponse:
    """One DAG with its dates, catchup, params, default_args, doc_md and running runs."""
    with reading(request) as conn:
        detail = reads.get_dag(conn, dag_id)
        ser = dag_repo.get_serialized(conn, dag_id) or {}
    running = v1_runs.list_runs(request, dag_id, limit=1, offset=0, state=["running"],
                                order_by="-run_after").total_entries
    base = adapt.dag(detail, list(ser.get("owners") or []))
    return v2.DagDetailsResponse(
        **base.model_dump(), catchup=bool(detail.catchup), doc_md=detail.doc_md,
        dag_run_timeout=_duration(ser.get("dagrun_timeout")),
        start_date=_when(detail.start_date), end_date=_when(detail.end_date),
        is_paused_upon_creation=ser.get("is_paused_upon_creation"), params=detail.params,
        render_template_as_native_obj=bool(ser.get("render_template_as_native_obj")),
        template_search_path=ser.get("template_searchpath"), timezone=detail.timezone,
        last_parsed=detail.last_parsed_at, default_args=ser.get("default_args"),
        active_runs_count=running, concurrency=detail.max_active_tasks)


@errors_router.get("/importErrors", response_model=v2.ImportErrorCollection)
def get_import_errors(request: Request, limit: PageLimit = 50, offset: Offset = 0
                      ) -> v2.ImportErrorCollection:
    """DAG files that failed to import, with the traceback of each."""
    page = v1_dags.list_import_errors(request, limit=limit, offset=offset)
    return v2.ImportErrorCollection(
        import_errors=[v2.ImportError_(import_error_id=e.import_error_id, timestamp=e.timestamp,
                                       filename=e.filename, bundle_name="dags-folder",
                                       stack_trace=e.stack_trace) for e in page.import_errors],
        total_entries=page.total_entries)


router.include_router(tasks.router)  # a DAG's tasks: tasks.py
