"""DAGs: list, detail, pause/unpause, the grid, and the DAG files that failed to import."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request, Response

from statewright.api import grid_reads, reads
from statewright.api import schemas as s
from statewright.api.deps import Limit, Offset, reading, writing
from statewright.api.errors import NotFound
from statewright.core.clock import utcnow
from statewright.core.states import DagRunState
from statewright.db.repositories import dags as dag_repo

router = APIRouter(tags=["DAGs"])


@router.get("/dags", response_model=s.DagCollection)
def list_dags(
    request: Request,
    limit: Limit = 100,
    offset: Offset = 0,
    paused: Annotated[bool | None, Query(description="Only paused (true) or active (false)."
                                         )] = None,
    tags: Annotated[list[str] | None, Query(description="DAGs with any of these tags.")] = None,
    dag_id_pattern: Annotated[str | None, Query(description="Part of the DAG id.")] = None,
    owners: Annotated[list[str] | None, Query(description="DAGs with a task of any of these "
                                              "owners.")] = None,
    last_dag_run_state: Annotated[DagRunState | None, Query(
        description="Only DAGs whose newest run is in this state.")] = None,
    is_favorite: Annotated[bool | None, Query(
        description="Only the DAGs you starred (true) or the others (false).")] = None,
) -> s.DagCollection:
    """DAGs ordered by id, each with its schedule, tags, owners, pause flag, its newest runs and
    whether you starred it."""
    identity = getattr(request.state, "identity", None)
    with reading(request) as conn:
        return reads.list_dags(conn, limit=limit, offset=offset, paused=paused,
                               tags=tags or [], dag_id_pattern=dag_id_pattern,
                               owners=owners or [],
                               last_run_state=last_dag_run_state.value
                               if last_dag_run_state else None,
                               username=identity.username if identity else None,
                               is_favorite=is_favorite)


@router.get("/dags/{dag_id}", response_model=s.DagDetail)
def get_dag(request: Request, dag_id: str) -> s.DagDetail:
    """One DAG with its tasks (as serialized by the DAG processor) and their dependencies."""
    with reading(request) as conn:
        return reads.get_dag(conn, dag_id)


@router.get("/dags/{dag_id}/details", response_model=s.DagDetails, response_model_by_alias=True)
def get_dag_details(request: Request, dag_id: str) -> s.DagDetails:
    """The DAG as its details page shows it: doc_md rendered as sanitized Markdown, params with
    defaults and descriptions, the schedule in words and its next runs, default_args, owners."""
    from statewright.api.dag_details import dag_details

    with reading(request) as conn:
        return dag_details(conn, dag_id, utcnow())


@router.patch("/dags/{dag_id}", response_model=s.DagDetail)
def patch_dag(request: Request, dag_id: str, body: s.DagPatch) -> s.DagDetail:
    """Pause (``{"is_paused": true}``) or unpause a DAG: a paused DAG gets no new runs started."""
    with writing(request) as conn:
        if not dag_repo.set_paused(conn, dag_id, body.is_paused):
            raise NotFound(f"No DAG with id {dag_id!r}; GET /api/v1/dags lists the DAGs.")
    with reading(request) as conn:
        return reads.get_dag(conn, dag_id)


@router.get("/dags/{dag_id}/grid", response_model=s.Grid | s.CompactGrid)
def get_grid(
    request: Request,
    dag_id: str,
    limit: Annotated[int, Query(ge=1, le=200, description="Runs per page.")] = 25,
    offset: Offset = 0,
    cell_format: Annotated[Literal["default", "compact"], Query(
        alias="format", description="``default``: each cell an object (``Grid``). ``compact`` "
        "(what the web UI reads; for a big grid a fifth of the bytes, in about a third of the "
        "time): each cell an array in the order of the top-level ``cell_fields``, trailing "
        "nulls left out, its state an index into the top-level ``states`` (``[state, "
        "state_name]`` pairs), its dates epoch milliseconds, UTC (``CompactGrid``).")
    ] = "default",
) -> s.Grid:
    """Runs (columns, oldest to newest) by tasks (rows, in DAG order): state, name and try of
    every task instance. One aggregated query reads every cell of the page. ``format=compact``
    encodes the cells as arrays (see the parameter); the other keys are the same."""
    with reading(request) as conn:
        grid = grid_reads.grid(conn, dag_id, limit=limit, offset=offset,
                               compact=cell_format == "compact")
    # Built as plain data and serialized once: FastAPI would validate the 25,000 cells of a
    # big grid again.
    return Response(grid_reads.grid_json(grid),  # type: ignore[return-value]
                    media_type="application/json")


@router.get("/importErrors", response_model=s.ImportErrorCollection)
def list_import_errors(request: Request, limit: Limit = 100, offset: Offset = 0
                       ) -> s.ImportErrorCollection:
    """DAG files that failed to import, with the traceback of each."""
    with reading(request) as conn:
        return reads.list_import_errors(conn, limit=limit, offset=offset)
