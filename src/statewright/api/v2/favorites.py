"""``/api/v2`` favourite DAGs, as Airflow 3.3's: ``POST /dags/{dag_id}/favorite`` and
``POST /dags/{dag_id}/unfavorite`` (a DAG that is not a favourite: 409). The stars are the
ones the web UI's DAG list and ``/api/v1`` keep."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from statewright.api.auth.permissions import AUTHENTICATED
from statewright.api.errors import Conflict
from statewright.api.routers.favorites import star
from statewright.api.v2.common import NOT_FOUND

router = APIRouter(tags=["DAG"])


@router.post("/dags/{dag_id}/favorite", status_code=204, responses=NOT_FOUND,
             openapi_extra=AUTHENTICATED)
def favorite_dag(request: Request, dag_id: str) -> Response:
    """Mark the DAG as a favourite of the user asking."""
    star(request, dag_id, True)
    return Response(status_code=204)


@router.post("/dags/{dag_id}/unfavorite", status_code=204,
             responses={**NOT_FOUND, 409: {"description": "Conflict"}},
             openapi_extra=AUTHENTICATED)
def unfavorite_dag(request: Request, dag_id: str) -> Response:
    """Unmark the DAG as a favourite of the user asking."""
    if not star(request, dag_id, False):
        raise Conflict(f"Dag {dag_id!r} is not marked as a favorite.")
    return Response(status_code=204)
