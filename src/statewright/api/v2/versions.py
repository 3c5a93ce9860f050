"""``/api/v2`` DAG versions and DAG sources, over the reads of ``/api/v1/dags/{dag_id}/
dagVersions`` and ``/api/v1/dagSources``: the source as JSON or, with ``Accept: text/plain``,
as the file's text."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import PlainTextResponse

from statewright.api.deps import Offset, reading
from statewright.api.errors import ApiError
from statewright.api.routers import dag_versions as v1_versions
from statewright.api.schemas_versions import DagVersion as V1Version
from statewright.api.v2 import schemas as v2v
from statewright.api.v2 import schemas_system as v2
from statewright.api.v2.common import NOT_FOUND, PageLimit, display_name
from statewright.api.v2.row_filters import OrderBy, order
from statewright.db.repositories import dags as dags_repo

router = APIRouter(tags=["DagVersion"])
sources = APIRouter(tags=["DagSource"])

_ORDER = {"id": "version_number", "version_number": "version_number",
          "bundle_name": "bundle_name", "bundle_version": "bundle_version"}


def _versions(request: Request, dag_id: str) -> list[v2v.DagVersion]:
    """The versions of one DAG, or with ``~`` of every DAG (stale ones too, as Airflow)."""
    if dag_id != "~":
        name = display_name(request, dag_id)
        return [_version(v, name) for v in
                v1_versions.list_dag_versions(request, dag_id).dag_versions]
    with reading(request) as conn:
        dags = dags_repo.list_dags(conn, only_active=False)
    return [row for d in dags for row in _versions(request, d.dag_id)]


def version_uuid(dag_id: str, number: int) -> str:
    """A stable id per DAG version (statewright's keys are integers; Airflow's UUIDs)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"statewright:dag-version:{dag_id}/{number}"))


def _version(v: V1Version, name: str) -> v2v.DagVersion:
    return v2v.DagVersion(id=version_uuid(v.dag_id, v.version_number),
                         version_number=v.version_number, dag_id=v.dag_id,
                         bundle_name="dags-folder", bundle_version=None,
                         created_at=v.created_at, dag_display_name=name)


@router.get("/dags/{dag_id}/dagVersions", response_model=v2.DagVersionCollection,
            responses=NOT_FOUND)
def get_dag_versions(
    request: Request,
    dag_id: str,
    limit: PageLimit = 50,
    offset: Offset = 0,
    version_number: Annotated[int | None, Query()] = None,
    bundle_name: Annotated[str | None, Query()] = None,
    bundle_version: Annotated[str | None, Query()] = None,
    order_by: OrderBy = None,
) -> v2.DagVersionCollection:
    """A DAG's versions (a new one each time its structure or its file's code changed);
    ``~``: every DAG's."""
    rows = [v for v in _versions(request, dag_id)
            if version_number is None or v.version_number == version_number]
    if bundle_name not in (None, "dags-folder") or bundle_version is not None:
        rows = []  # one bundle, dags-folder, without versions
    rows = order(rows, order_by, _ORDER, "id")
    return v2.DagVersionCollection(dag_versions=rows[offset:offset + limit],
                                   total_entries=len(rows))


@router.get("/dags/{dag_id}/dagVersions/{version_number}", response_model=v2v.DagVersion,
            responses=NOT_FOUND)
def get_dag_version(request: Request, dag_id: str,
                    version_number: Annotated[int, Path(ge=1, le=2**31 - 1)]
                    ) -> v2v.DagVersion:
    """One version of a DAG."""
    got = v1_versions.get_dag_version(request, dag_id, version_number)
    return _version(got, display_name(request, dag_id))


def wants_text(request: Request) -> bool:
    accept = request.headers.get("accept", "*/*").split(",")[0].split(";")[0].strip()
    if accept not in ("application/json", "text/plain", "*/*", ""):
        raise _NotAcceptable("Only application/json or text/plain is supported")
    return accept == "text/plain"


class _NotAcceptable(ApiError):
    status_code = 406


@sources.get("/dagSources/{dag_id}", response_model=v2.DagSource,
             responses={**NOT_FOUND, 200: {"content": {"text/plain": {}}},
                        406: {"description": "Not Acceptable"}})
def get_dag_source(request: Request, dag_id: str,
                   version_number: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None
                   ) -> Any:
    """The source code of a DAG's file (its latest version's, or ``version_number``'s); with
    ``Accept: text/plain`` the text alone."""
    text = wants_text(request)
    got = v1_versions.get_dag_source(request, dag_id, version_number)
    if text:
        return PlainTextResponse(got.content)
    return v2.DagSource(content=got.content, dag_id=dag_id, version_number=got.version_number,
                        dag_display_name=display_name(request, dag_id))
