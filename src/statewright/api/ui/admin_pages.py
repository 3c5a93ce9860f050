"""The operator pages: backfills, pools, triggers and triggerers. Each page embeds the same
answer as its REST route, so it shows at once; its script (admin_pages.js) draws it as text,
refreshes it from the API and sends the actions through the API."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from statewright.api import reads
from statewright.api.deps import reading
from statewright.api.routers import backfills, pools, triggers

router = APIRouter(include_in_schema=False)


@router.get("/backfills", response_class=HTMLResponse)
def backfills_page(request: Request) -> Response:
    from statewright.api.ui.views import _page

    with reading(request) as conn:
        dags = reads.list_dags(conn, limit=1000, offset=0, paused=None, tags=[],
                               dag_id_pattern=None)
    listed = backfills.list_backfills(request, dag_id=None, limit=100, offset=0)
    data = {"backfills": listed.model_dump(mode="json"),
            "dags": [{"dag_id": d.dag_id, "schedule": d.schedule, "is_paused": d.is_paused}
                     for d in dags.dags]}
    return _page(request, "backfills.html", title="Backfills · statewright", page="backfills",
                 data=data)


@router.get("/pools", response_class=HTMLResponse)
def pools_page(request: Request) -> Response:
    from statewright.api.ui.views import _page

    data = pools.list_pools(request, limit=1000, offset=0).model_dump(mode="json")
    return _page(request, "pools.html", title="Pools · statewright", page="pools", data=data)


@router.get("/triggers", response_class=HTMLResponse)
def triggers_page(request: Request) -> Response:
    from statewright.api.ui.views import _page

    data = {
        "jobs": triggers.list_jobs(request, job_type=None, hostname=None, is_alive=None,
                                   limit=100, offset=0).model_dump(mode="json"),
        "triggers": triggers.list_triggers(request, triggerer_id=None, limit=500,
                                           offset=0).model_dump(mode="json"),
    }
    return _page(request, "triggers.html", title="Triggers · statewright", page="triggers",
                 data=data)
