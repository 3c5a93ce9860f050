"""The Browse pages: DAG runs, task instances and XCom entries across DAGs, with filters,
paging and sorting, as Airflow 3's Browse menu has them. Each page is a frame: its script
(browse_table.js and the list's own module) reads the filters from the address and the rows
from /api/v2's cross-DAG lists (``/dags/~/dagRuns``, ``/dags/~/dagRuns/~/taskInstances``,
``/dags/~/dagRuns/~/taskInstances/~/xcomEntries``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from statewright.core.states import DagRunState, TaskInstanceState

router = APIRouter(include_in_schema=False)

_RUN_TYPES = ["manual", "scheduled", "backfill", "asset_triggered", "flow"]
_DATES = [("logical_date_gte", "Logical date from", "datetime"),
          ("logical_date_lte", "to", "datetime")]
LISTS: dict[str, dict[str, Any]] = {
    "runs": {
        "path": "/dag-runs", "heading": "DAG runs", "module": "browse_runs.js",
        "filters": [("dag_id_pattern", "DAG id", "text"), ("run_id_pattern", "Run id", "text"),
                    ("state", "State", [s.value for s in DagRunState]),
                    ("run_type", "Run type", _RUN_TYPES), *_DATES],
    },
    "task_instances": {
        "path": "/task-instances", "heading": "Task instances",
        "module": "browse_task_instances.js",
        "filters": [("dag_id_pattern", "DAG id", "text"), ("run_id_pattern", "Run id", "text"),
                    ("task_display_name_pattern", "Task id", "text"),
                    ("state", "State", [s.value for s in TaskInstanceState]), *_DATES],
    },
    "xcoms": {
        "path": "/xcoms", "heading": "XComs", "module": "browse_xcoms.js",
        "filters": [("dag_id", "DAG id (exact)", "text"), ("run_id_pattern", "Run id", "text"),
                    ("task_id_pattern", "Task id", "text"), ("xcom_key_pattern", "Key", "text"),
                    *_DATES],
    },
}


def _browse(request: Request, kind: str) -> Response:
    from statewright.api.ui.views import _page

    spec = LISTS[kind]
    return _page(request, "browse.html", title=f"{spec['heading']} · statewright",
                 page=f"browse_{kind}", spec=spec, data={"kind": kind})


@router.get("/dag-runs", response_class=HTMLResponse)
def dag_runs_page(request: Request) -> Response:
    return _browse(request, "runs")


@router.get("/task-instances", response_class=HTMLResponse)
def task_instances_page(request: Request) -> Response:
    return _browse(request, "task_instances")


@router.get("/xcoms", response_class=HTMLResponse)
def xcoms_page(request: Request) -> Response:
    return _browse(request, "xcoms")
