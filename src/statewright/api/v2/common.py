"""What the ``/api/v2`` routers share: page sizes as Airflow's, documented error answers."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query, Request
from pydantic import BeforeValidator

from statewright.api import reads
from statewright.api.deps import reading
from statewright.api.errors import ApiError

DEFAULT_PAGE = 50


def _blank_is_default(value: Any) -> Any:
    return DEFAULT_PAGE if value == "" else value


PageLimit = Annotated[int, BeforeValidator(_blank_is_default),
                      Query(ge=0, le=1000, description="Page size.")]
"""A page size; an empty ``limit=`` (airflowctl sends one for a ``--limit`` left out) is the
default page."""

NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "Not Found"}}
CONFLICT: dict[int | str, dict[str, Any]] = {409: {"description": "Conflict"}}


def display_name(request: Request, dag_id: str) -> str:
    """The DAG's display name (its id unless it sets one); 404 for an unknown DAG."""
    with reading(request) as conn:
        row = reads.dag_row(conn, dag_id)
    ser = getattr(row, "serialized", None) or {}
    return str(ser.get("dag_display_name") or dag_id)


def _query_names(dependant: Any) -> set[str]:
    names = {p.alias for p in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


def served_parameters_only(request: Request) -> None:
    """A query parameter the route does not serve (one of Airflow's filters statewright has
    not taken up yet) is refused with 400 naming it: a script never gets an unfiltered answer
    it believes filtered."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return
    known = _query_names(dependant)
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        served = ", ".join(sorted(known)) or "none"
        raise ApiError(f"Query parameter {', '.join(unknown)} is not served by statewright's "
                       f"/api/v2 yet (docs/api.md lists what differs from Airflow); this "
                       f"route takes: {served}. Nothing was changed.")
