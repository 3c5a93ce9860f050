"""What the ``/api/v2`` routers share: page sizes as Airflow's, documented error answers."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query, Request

from statewright.api import reads
from statewright.api.deps import reading

PageLimit = Annotated[int, Query(ge=0, le=1000, description="Page size.")]

NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "Not Found"}}
CONFLICT: dict[int | str, dict[str, Any]] = {409: {"description": "Conflict"}}


def display_name(request: Request, dag_id: str) -> str:
    """The DAG's display name (its id unless it sets one); 404 for an unknown DAG."""
    with reading(request) as conn:
        row = reads.dag_row(conn, dag_id)
    ser = getattr(row, "serialized", None) or {}
    return str(ser.get("dag_display_name") or dag_id)
