"""Favourite DAGs: a star per DAG per user, kept on the server (Airflow 3.1's favourites).
``GET /dags?is_favorite=true`` lists them; every DAG in a list says ``is_favorite``."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from statewright.api import reads
from statewright.api.auth.permissions import AUTHENTICATED
from statewright.api.deps import writing
from statewright.api.errors import BadRequest
from statewright.core.clock import utcnow
from statewright.db.repositories import favorites

router = APIRouter(tags=["DAGs"])
_ANSWERS = {204: {"description": "Done (also when nothing changed)"},
            404: {"description": "No such DAG"}}


def _user(request: Request) -> str:
    identity = getattr(request.state, "identity", None)
    if identity is None:  # only when authentication is off: nobody to keep a star for
        raise BadRequest("Stars are kept per user: sign in to star a DAG.")
    return str(identity.username)


def star(request: Request, dag_id: str, starred: bool) -> bool:
    """Star (or unstar) the DAG for the user asking; False when nothing changed."""
    username = _user(request)
    with writing(request) as conn:
        reads.dag_row(conn, dag_id)
        uid = favorites.user_id(conn, username)
        if uid is None and starred:
            raise BadRequest(f"User {username!r} is not stored: stars are kept per stored user.")
        if uid is None:
            return False
        if starred:
            return favorites.add(conn, uid, dag_id, utcnow())
        return favorites.remove(conn, uid, dag_id)


def _star(request: Request, dag_id: str, starred: bool) -> Response:
    star(request, dag_id, starred)
    return Response(status_code=204)


@router.post("/dags/{dag_id}/favorite", status_code=204, responses=_ANSWERS,
             openapi_extra=AUTHENTICATED)
def favorite_dag(request: Request, dag_id: str) -> Response:
    """Star the DAG for you (it then lists under ``is_favorite=true``)."""
    return _star(request, dag_id, True)


@router.delete("/dags/{dag_id}/favorite", status_code=204, responses=_ANSWERS,
               openapi_extra=AUTHENTICATED)
def unfavorite_dag(request: Request, dag_id: str) -> Response:
    """Remove your star from the DAG."""
    return _star(request, dag_id, False)
