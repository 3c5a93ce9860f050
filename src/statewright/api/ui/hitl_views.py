"""The web UI's "Required actions" page: the task instances awaiting a person's input, each
with its form (built from its params) and its options. Responses go through the REST API."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from statewright.api.deps import reading
from statewright.api.routers.hitl import detail_of
from statewright.db.repositories import hitl as hitl_repo

router = APIRouter(include_in_schema=False)


@router.get("/required-actions", response_class=HTMLResponse)
def required_actions_page(
    request: Request,
    dag_id: Annotated[str | None, Query()] = None,
    run_id: Annotated[str | None, Query()] = None,
    task_id: Annotated[str | None, Query()] = None,
    map_index: Annotated[int | None, Query(ge=-1)] = None,
) -> Response:
    from statewright.api.ui.views import _page

    with reading(request) as conn:
        rows = hitl_repo.listing(conn, dag_id=dag_id, run_id=run_id, task_id=task_id,
                                 pending=True, limit=500)
    details = [_with_body_html(detail_of(r).model_dump(mode="json")) for r in rows
               if map_index is None or r.map_index == map_index]
    return _page(request, "required_actions.html", title="Required actions · statewright",
                 page="required_actions", data={"actions": details})


def _with_body_html(detail: dict[str, Any]) -> dict[str, Any]:
    """The body as Markdown (as Airflow's UI shows it), rendered and sanitized like doc_md."""
    from statewright.api.dag_details import render_doc_md

    return {**detail, "body_html": render_doc_md(detail.get("body"))}
