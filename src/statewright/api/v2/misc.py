"""``/api/v2`` event logs (statewright's audit log, admin only as in /api/v1), assets and their
events, backfills."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from statewright.api.auth import admin as v1_admin
from statewright.api.auth.permissions import ADMIN
from statewright.api.deps import Offset
from statewright.api.errors import ApiError
from statewright.api.routers import assets as v1_assets
from statewright.api.routers import backfills as v1_backfills
from statewright.api.v2 import schemas as v2
from statewright.api.v2 import schemas_admin as v2a
from statewright.api.v2.common import CONFLICT, NOT_FOUND, PageLimit, display_name

event_logs = APIRouter(tags=["Event Log"])
assets = APIRouter(tags=["Asset"])
backfills = APIRouter(tags=["Backfill"])


@event_logs.get("/eventLogs", response_model=v2.EventLogCollection, openapi_extra=ADMIN)
def get_event_logs(
    request: Request,
    limit: PageLimit = 50,
    offset: Offset = 0,
    dag_id: Annotated[str | None, Query()] = None,
    owner: Annotated[str | None, Query()] = None,
    event: Annotated[str | None, Query()] = None,
) -> v2.EventLogCollection:
    """The audit log, newest first; ``extra`` holds the method, path, outcome and detail."""
    page = v1_admin.event_logs(request, limit=limit, offset=offset, dag_id=dag_id,
                               owner=owner, event=event, outcome=None)
    return v2.EventLogCollection(total_entries=page.total_entries, event_logs=[v2.EventLog(
        event_log_id=e.event_log_id, when=e.when, dag_id=e.dag_id, event=e.event,
        owner=e.owner, extra=json.dumps({
            "method": e.method, "path": e.path, "target": e.target, "outcome": e.outcome,
            "status_code": e.status_code, "detail": e.detail}))
        for e in page.event_logs])


def _asset(a: dict[str, Any]) -> v2a.Asset:
    made, changed = a["created_at"], a["updated_at"]
    return v2a.Asset(
        id=a["id"], name=a["name"], uri=a["uri"], group=a["group"] or "asset",
        extra=a["extra"], created_at=made, updated_at=changed,
        scheduled_dags=[v2a.DagScheduleReference(dag_id=d, created_at=made, updated_at=changed)
                        for d in a["consuming_dags"]],
        producing_tasks=[v2a.TaskAssetReference(dag_id=p["dag_id"], task_id=p["task_id"],
                                                created_at=made, updated_at=changed)
                         for p in a["producing_tasks"]],
        consuming_tasks=[],
        aliases=[v2a.AssetAlias(id=0, name=n, group="asset") for n in a["aliases"]],
        # statewright's watchers have no trigger row: trigger_id 0 (docs/api.md)
        watchers=[v2a.AssetWatcher(name=w["name"], trigger_id=0, created_date=made)
                  for w in a["watchers"]],
        last_asset_event=v2a.LastAssetEvent(timestamp=a["last_event_at"])
        if a["last_event_at"] else None)


@assets.get("/assets", response_model=v2a.AssetCollection)
def get_assets(
    request: Request,
    limit: PageLimit = 50,
    offset: Offset = 0,
    name_pattern: Annotated[str | None, Query()] = None,
    uri_pattern: Annotated[str | None, Query()] = None,
    dag_ids: Annotated[list[str] | None, Query()] = None,
) -> v2a.AssetCollection:
    """Assets with the tasks that produce them and the DAGs scheduled on them."""
    items = v1_assets.list_assets(request)["assets"]
    if name_pattern:
        items = [a for a in items if name_pattern.strip("%").lower() in a["name"].lower()]
    if uri_pattern:
        items = [a for a in items if uri_pattern.strip("%").lower() in a["uri"].lower()]
    if dag_ids:
        items = [a for a in items if set(dag_ids) & (
            set(a["consuming_dags"]) | {p["dag_id"] for p in a["producing_tasks"]})]
    return v2a.AssetCollection(assets=[_asset(a) for a in items[offset:offset + limit]],
                               total_entries=len(items))


def _asset_ids(request: Request) -> dict[str, int]:
    return {a["name"]: a["id"] for a in v1_assets.list_assets(request)["assets"]}


def _event(e: v1_assets.AssetEventOut, ids: dict[str, int]) -> v2a.AssetEvent:
    name = e.asset.get("name")
    return v2a.AssetEvent(
        id=e.id, asset_id=ids.get(name or "", 0), uri=e.asset.get("uri"), name=name,
        group=e.asset.get("group"), extra=e.extra, source_task_id=e.source_task_id,
        source_dag_id=e.source_dag_id, source_run_id=e.source_run_id,
        source_map_index=e.source_map_index, created_dagruns=[], timestamp=e.timestamp,
        partition_key=getattr(e, "partition_key", None))


@assets.get("/assets/events", response_model=v2a.AssetEventCollection)
def get_asset_events(
    request: Request,
    limit: PageLimit = 50,
    offset: Offset = 0,
    asset_id: Annotated[int | None, Query()] = None,
    source_dag_id: Annotated[str | None, Query()] = None,
) -> v2a.AssetEventCollection:
    """Asset events, newest first."""
    ids = _asset_ids(request)
    name = next((n for n, i in ids.items() if i == asset_id), None)
    if asset_id is not None and name is None:
        return v2a.AssetEventCollection(asset_events=[], total_entries=0)
    page = v1_assets.list_asset_events(request, limit=offset + limit, asset=name,
                                       source_dag_id=source_dag_id)
    return v2a.AssetEventCollection(
        asset_events=[_event(e, ids) for e in page.asset_events[offset:]],
        total_entries=page.total_entries)


@assets.post("/assets/events", response_model=v2a.AssetEvent, responses=NOT_FOUND)
def create_asset_event(request: Request, body: v2a.CreateAssetEventBody) -> v2a.AssetEvent:
    """Record an event of an asset from outside: the DAGs scheduled on it are queued as for a
    task's event."""
    if body.partition_key is not None:
        raise ApiError("Invalid request: partition_key is not served yet for asset events. "
                         "Nothing was recorded.")
    made = v1_assets.create_asset_event(request, v1_assets.AssetEventBody(
        asset_id=body.asset_id, extra=body.extra))
    return _event(made, _asset_ids(request))


def _backfill(request: Request, b: v1_backfills.BackfillResponse) -> v2a.Backfill:
    return v2a.Backfill(**b.model_dump(exclude={"progress", "run_backwards",
                                                "reprocess_behavior"}),
                        reprocess_behavior=b.reprocess_behavior,  # type: ignore[arg-type]
                        dag_display_name=display_name(request, b.dag_id))


@backfills.get("/backfills", response_model=v2a.BackfillCollection)
def list_backfills(request: Request, dag_id: Annotated[str, Query()], limit: PageLimit = 50,
                   offset: Offset = 0) -> v2a.BackfillCollection:
    """The backfills of a DAG."""
    page = v1_backfills.list_backfills(request, dag_id=dag_id, limit=limit, offset=offset)
    return v2a.BackfillCollection(backfills=[_backfill(request, b) for b in page.backfills],
                                  total_entries=page.total_entries)


BackfillId = Annotated[int, Path(ge=1, le=2**31 - 1)]


@backfills.post("/backfills", response_model=v2a.Backfill, responses={**NOT_FOUND, **CONFLICT})
def create_backfill(request: Request, body: v2a.BackfillPostBody) -> v2a.Backfill:
    """Create a backfill of a DAG's scheduled times in ``from_date``..``to_date`` (the same
    service as ``statewright backfill``; runs on the DAG's current version)."""
    made = v1_backfills.create_backfill(request, v1_backfills.BackfillPostBody(
        **body.model_dump(exclude={"run_on_latest_version"})))
    return _backfill(request, made)


@backfills.get("/backfills/{backfill_id}", response_model=v2a.Backfill, responses=NOT_FOUND)
def get_backfill(request: Request, backfill_id: BackfillId) -> v2a.Backfill:
    """One backfill."""
    return _backfill(request, v1_backfills.get_backfill(request, backfill_id))


@backfills.put("/backfills/{backfill_id}/pause", response_model=v2a.Backfill,
               responses={**NOT_FOUND, **CONFLICT})
def pause_backfill(request: Request, backfill_id: BackfillId) -> v2a.Backfill:
    """No new run of the backfill is created; the runs it made go on."""
    return _backfill(request, v1_backfills.pause_backfill(request, backfill_id))


@backfills.put("/backfills/{backfill_id}/unpause", response_model=v2a.Backfill,
               responses={**NOT_FOUND, **CONFLICT})
def unpause_backfill(request: Request, backfill_id: BackfillId) -> v2a.Backfill:
    """The backfill carries on."""
    return _backfill(request, v1_backfills.unpause_backfill(request, backfill_id))


@backfills.put("/backfills/{backfill_id}/cancel", response_model=v2a.Backfill,
               responses={**NOT_FOUND, **CONFLICT})
def cancel_backfill(request: Request, backfill_id: BackfillId) -> v2a.Backfill:
    """Stop the backfill: its queued runs are cancelled, running ones finish."""
    return _backfill(request, v1_backfills.cancel_backfill(request, backfill_id))
