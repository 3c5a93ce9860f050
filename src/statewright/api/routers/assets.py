"""Assets: list them with their producers and consumers, their events, the asset graph; post an
asset event from outside; a DAG's pending asset condition; a run's triggering events."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from statewright.api.deps import Limit, reading, writing
from statewright.api.errors import NotFound
from statewright.core.clock import utcnow
from statewright.db.repositories import asset_events as event_repo
from statewright.db.repositories import assets as asset_repo
from statewright.services import asset_view
from statewright.services.asset_events import UnknownAsset, emit

router = APIRouter(tags=["Assets"])


class AssetEventBody(BaseModel):
    """An asset named by ``asset_id`` (Airflow's field), ``name`` or ``uri``; ``extra``."""

    model_config = ConfigDict(extra="forbid")
    asset_id: int | None = Field(default=None, description="The asset's id.")
    name: str | None = Field(default=None, min_length=1, description="The asset's name.")
    uri: str | None = Field(default=None, min_length=1, description="The asset's URI.")
    extra: dict[str, Any] = Field(default_factory=dict,
                                  description="A JSON object stored with the event.")


class AssetEventOut(BaseModel):
    id: int
    asset: dict[str, Any]
    extra: dict[str, Any]
    timestamp: datetime
    source: str
    source_dag_id: str | None = None
    source_run_id: str | None = None
    source_task_id: str | None = None
    source_map_index: int = -1
    source_aliases: list[str] = Field(default_factory=list)


class AssetEventCollection(BaseModel):
    asset_events: list[AssetEventOut]
    total_entries: int


@router.get("/assets")
def list_assets(request: Request) -> dict[str, Any]:
    """Every asset: URI, group, extra, the tasks that produce it, the DAGs scheduled on it, its
    number of events and latest event, its watchers."""
    with reading(request) as conn:
        items = asset_view.list_assets(conn)
    for item in items:
        item["producing_tasks"] = [{"dag_id": d, "task_id": t} for d, t in item["producing_tasks"]]
    return {"assets": items, "total_entries": len(items)}


@router.get("/assets/graph")
def asset_graph(request: Request) -> dict[str, Any]:
    """Producer DAG → asset → consumer DAG (and alias → the assets it resolved to)."""
    with reading(request) as conn:
        return asset_view.graph(conn)


@router.get("/assets/events", response_model=AssetEventCollection)
def list_asset_events(
    request: Request, limit: Limit = 100,
    asset: Annotated[str | None, Query(description="Only events of this asset (name).")] = None,
    source_dag_id: Annotated[str | None, Query(description="Only events of this DAG.")] = None,
) -> AssetEventCollection:
    """Asset events, newest first."""
    with reading(request) as conn:
        events = event_repo.list_events(conn, asset_name=asset, source_dag_id=source_dag_id,
                                        limit=limit)
    return AssetEventCollection(asset_events=[AssetEventOut(**e) for e in events],
                                total_entries=len(events))


@router.post("/assets/events", response_model=AssetEventOut,
             responses={404: {"description": "Unknown asset"}})
def create_asset_event(request: Request, body: AssetEventBody) -> AssetEventOut:
    """Record an event of a known asset (an external system updated it); the DAGs scheduled
    on the asset are queued as for an event of a task."""
    given = [x for x in (body.asset_id, body.name, body.uri) if x is not None]
    if len(given) != 1:
        from statewright.api.errors import BadRequest

        raise BadRequest("name the asset with exactly one of asset_id, name or uri; nothing "
                         "was recorded.")
    try:
        with writing(request) as conn:
            key = body.name or body.uri
            if body.asset_id is not None:
                row = next((a for a in asset_repo.list_assets(conn) if a.id == body.asset_id),
                           None)
                if row is None:
                    raise UnknownAsset(f"no asset has the id {body.asset_id}; GET "
                                       "/api/v1/assets lists the assets.")
                key = row.name
            assert key is not None
            event = emit(conn, key, extra=body.extra, now=utcnow(), source="api")
    except UnknownAsset as exc:
        raise NotFound(f"{exc} Nothing was recorded.") from None
    return AssetEventOut(**event)


@router.get("/dags/{dag_id}/assets")
def dag_assets(request: Request, dag_id: str) -> dict[str, Any]:
    """The DAG's asset condition, what it has already and what it still waits for
    (``pending``: each node says whether it holds), and its asset references."""
    with reading(request) as conn:
        found = asset_view.dag_assets(conn, dag_id)
    if found is None:
        raise NotFound(f"No DAG with id {dag_id!r} is known. GET /api/v1/dags lists the DAGs.")
    return found


@router.get("/dags/{dag_id}/dagRuns/{run_id}/upstreamAssetEvents",
            response_model=AssetEventCollection)
def triggering_events(request: Request, dag_id: str, run_id: str) -> AssetEventCollection:
    """The asset events that triggered the run (Airflow's ``upstreamAssetEvents``)."""
    with reading(request) as conn:
        events = asset_view.run_triggering_events(conn, dag_id, run_id)
    if events is None:
        raise NotFound(f"DAG {dag_id!r} has no run {run_id!r}.")
    return AssetEventCollection(asset_events=[AssetEventOut(**e) for e in events],
                                total_entries=len(events))


def asset_page_data(conn: Any) -> dict[str, Any]:
    """What the web UI's assets page starts from (the same reads as the routes above)."""
    items = asset_view.list_assets(conn)
    for item in items:
        item["producing_tasks"] = [{"dag_id": d, "task_id": t} for d, t in item["producing_tasks"]]
    consumers = sorted({d for a in items for d in a["consuming_dags"]})
    conditions = [c for c in (asset_view.dag_assets(conn, d) for d in consumers) if c]
    events = event_repo.list_events(conn, limit=50)
    return jsonable({"assets": items, "graph": asset_view.graph(conn),
                     "conditions": conditions, "events": events})


def jsonable(value: Any) -> Any:
    """Datetimes as ISO strings, for a page's embedded JSON."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value
