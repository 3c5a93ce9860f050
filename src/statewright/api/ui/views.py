"""The web UI's pages: Jinja2 templates over the same reads as the REST API.

Each page is rendered with its data embedded as JSON, so it shows at once; the page's script
draws the live parts from that JSON and polls the REST API (every 2 s while a run is unfinished).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.templating import Jinja2Templates
from pydantic import BeforeValidator

from statewright.api import grid_reads, reads
from statewright.api.dag_details import dag_details
from statewright.api.deps import MAX_OFFSET, reading
from statewright.api.errors import NotFound
from statewright.api.ui.static_assets import STATIC_DIR, install_versioned_urls
from statewright.core.clock import utcnow
from statewright.core.states import DagRunState, TaskInstanceState
from statewright.services import task_state_view

TEMPLATES = Jinja2Templates(directory=Path(__file__).resolve().parent / "templates")


def _page_json(value: Any, **_: Any) -> str:
    """JSON for ``| tojson`` (which then makes it safe in HTML): pydantic's serializer, a tenth
    of the time of ``json.dumps`` on the DAG page's grid of 25,000 cells, whose rows' cells
    the database wrote as JSON (``grid_reads.dumps``)."""
    return grid_reads.dumps(value).decode()


TEMPLATES.env.policies["json.dumps_function"] = _page_json
install_versioned_urls(TEMPLATES, STATIC_DIR)
router = APIRouter(include_in_schema=False)
PAGE_SIZE = 50
# A filter form sends an empty field for "any": read as no filter.
_ANY_IF_BLANK = BeforeValidator(lambda v: None if v == "" else v)
GRID_RUNS = 25


def _page(request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
    context.setdefault("title", "statewright")
    context["ti_states"] = [s.value for s in TaskInstanceState]
    context["run_states"] = [s.value for s in DagRunState]
    return TEMPLATES.TemplateResponse(request, template, context, status_code=status_code)


def _not_found(request: Request, exc: NotFound) -> Response:
    return _page(request, "not_found.html", status_code=404, title="Not found",
                 detail=exc.detail)


@router.get("/", response_class=HTMLResponse)
def dag_list(
    request: Request,
    q: Annotated[str | None, Query()] = None,
    tag: Annotated[str | None, Query()] = None,
    paused: Annotated[bool | None, Query(), _ANY_IF_BLANK] = None,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    owner: Annotated[str | None, Query(max_length=250)] = None,
    last_run_state: Annotated[DagRunState | None, Query(), _ANY_IF_BLANK] = None,
    favorite: Annotated[bool | None, Query(), _ANY_IF_BLANK] = None,
) -> Response:
    identity = getattr(request.state, "identity", None)
    with reading(request) as conn:
        dags = reads.list_dags(conn, limit=PAGE_SIZE, offset=offset, paused=paused,
                               tags=[tag] if tag else [], dag_id_pattern=q or None,
                               owners=[owner] if owner else [],
                               last_run_state=last_run_state.value if last_run_state else None,
                               username=identity.username if identity else None,
                               is_favorite=favorite)
        errors = reads.list_import_errors(conn, limit=1, offset=0).total_entries
    return _page(request, "dags.html", title="DAGs · statewright", page="dags",
                 data=dags.model_dump(mode="json"), q=q or "", tag=tag or "", paused=paused,
                 offset=offset, limit=PAGE_SIZE, import_errors=errors, owner=owner or "",
                 last_run_state=last_run_state.value if last_run_state else "",
                 favorite=favorite)


@router.get("/dags/{dag_id}", response_class=HTMLResponse)
def dag_page(
    request: Request,
    dag_id: str,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    run_id: Annotated[str | None, Query()] = None,
    task_id: Annotated[str | None, Query()] = None,
    map_index: Annotated[int, Query(ge=-1)] = -1,
) -> Response:
    try:
        with reading(request) as conn:
            dag = reads.get_dag(conn, dag_id)
            grid = grid_reads.grid(conn, dag_id, limit=GRID_RUNS, offset=offset, compact=True)
            details = dag_details(conn, dag_id, utcnow(), detail=dag)
    except NotFound as exc:
        return _not_found(request, exc)
    last_task_runs = sum(1 for row in grid["rows"] if row["instances"] and row["instances"][-1])
    return _page(request, "dag.html", title=f"{dag_id} · statewright", page="dag", dag=dag,
                 last_task_runs=last_task_runs,
                 details=details,
                 data={"dag": dag.model_dump(mode="json"), "grid": grid_reads.grid_jsonable(grid),
                       "open": {"run_id": run_id, "task_id": task_id,
                                "map_index": map_index}})


@router.get("/dags/{dag_id}/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, dag_id: str, run_id: str) -> Response:
    try:
        with reading(request) as conn:
            run = reads.get_run(conn, dag_id, run_id)
            tis = reads.list_task_instances(conn, dag_id, run_id)
            history = reads.run_history(conn, dag_id, run_id)
    except NotFound as exc:
        return _not_found(request, exc)
    return _page(request, "run.html", title=f"{run_id} · {dag_id} · statewright", page="run",
                 run=run, data={"run": run.model_dump(mode="json"),
                                "task_instances": tis.model_dump(mode="json"),
                                "history": history.model_dump(mode="json")})


@router.get("/dags/{dag_id}/runs/{run_id}/tasks/{task_id}", response_class=HTMLResponse)
def task_instance_page(request: Request, dag_id: str, run_id: str, task_id: str,
                       map_index: Annotated[int, Query(ge=-1)] = -1) -> Response:
    try:
        with reading(request) as conn:
            ti = reads.get_task_instance(conn, dag_id, run_id, task_id, map_index)
            history = reads.task_instance_history(conn, dag_id, run_id, task_id, map_index)
            kept = task_state_view.task_state(conn, dag_id, run_id, task_id, map_index)
            shown = _task_display_name(reads.dag_row(conn, dag_id), task_id)
    except NotFound as exc:
        return _not_found(request, exc)
    label = task_id if map_index < 0 else f"{task_id} [{ti.rendered_map_index or map_index}]"
    return _page(request, "task_instance.html", title=f"{label} · {run_id} · statewright",
                 page="task_instance", ti=ti, task_state=kept, as_json=_as_json,
                 task_display_name=shown,
                 data={"ti": ti.model_dump(mode="json"),
                       "history": history.model_dump(mode="json")})


@router.get("/import-errors", response_class=HTMLResponse)
def import_errors_page(request: Request) -> Response:
    with reading(request) as conn:
        errors = reads.list_import_errors(conn, limit=1000, offset=0)
    return _page(request, "import_errors.html", title="Import errors · statewright",
                 page="import_errors", errors=errors)


@router.get("/assets", response_class=HTMLResponse)
def assets_page(request: Request) -> Response:
    from statewright.api.routers.assets import asset_page_data

    with reading(request) as conn:
        data = asset_page_data(conn)
        states = task_state_view.asset_states(conn)
    return _page(request, "assets.html", title="Assets · statewright", page="assets",
                 data=data, asset_states=states, as_json=_as_json)


def _task_display_name(dag_row: Any, task_id: str) -> str | None:
    """The task's ``task_display_name`` when it sets one."""
    for t in (getattr(dag_row, "serialized", None) or {}).get("tasks", ()):
        if t.get("task_id") == task_id:
            return t.get("task_display_name")  # type: ignore[no-any-return]
    return None


def _as_json(value: Any) -> str:
    """A stored state value as the text the page shows (escaped by the template)."""
    import json

    return json.dumps(value, default=str)


# The admin pages of connections and variables.
from statewright.api.ui.admin_views import router as _admin_router  # noqa: E402

router.include_router(_admin_router)

# The "Required actions" page (human in the loop).
from statewright.api.ui.hitl_views import router as _hitl_router  # noqa: E402

router.include_router(_hitl_router)
# The code view of a DAG (its file's source at each version).
from statewright.api.ui.code_views import router as _code_router  # noqa: E402

router.include_router(_code_router)
# The operator pages: backfills, pools, triggers and triggerers.
from statewright.api.ui.admin_pages import router as _operator_router  # noqa: E402

router.include_router(_operator_router)
