"""DAG versions and their source code (Airflow 3's dagVersions and dagSources routes)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from statewright.api import version_reads
from statewright.api.deps import reading
from statewright.api.schemas_versions import DagSource, DagVersionCollection, DagVersionDetail

router = APIRouter(tags=["DAG versions"])

Number = Annotated[int, Path(ge=1, description="The version number (1 is the first).")]


@router.get("/dags/{dag_id}/dagVersions", response_model=DagVersionCollection)
def list_dag_versions(request: Request, dag_id: str) -> DagVersionCollection:
    """A DAG's versions, oldest first: a new one each time its structure or its file's code
    changed."""
    with reading(request) as conn:
        return version_reads.list_versions(conn, dag_id)


@router.get("/dags/{dag_id}/dagVersions/{version_number}", response_model=DagVersionDetail)
def get_dag_version(request: Request, dag_id: str, version_number: Number) -> DagVersionDetail:
    """One version with its structure: tasks, dependencies, task groups."""
    with reading(request) as conn:
        return version_reads.get_version(conn, dag_id, version_number)


@router.get("/dags/{dag_id}/dagVersions/{version_number}/source", response_model=DagSource)
def get_dag_version_source(request: Request, dag_id: str, version_number: Number
                           ) -> DagSource:
    """The source code of the DAG's file as that version read it."""
    with reading(request) as conn:
        return version_reads.get_source(conn, dag_id, version_number)


@router.get("/dagSources/{dag_id}", response_model=DagSource)
def get_dag_source(
    request: Request,
    dag_id: str,
    version_number: Annotated[int | None, Query(ge=1, description="Default: the latest.")
                              ] = None,
) -> DagSource:
    """The source code of a DAG's file (Airflow's ``GET /dagSources/{dag_id}``)."""
    with reading(request) as conn:
        return version_reads.get_source(conn, dag_id, version_number)
