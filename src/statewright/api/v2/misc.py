"""``/api/v2`` assets and their events, backfills (and the event logs' router, from
``event_logs``)."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from statewright.api.deps import Offset, reading
from statewright.api.errors import ApiError
from statewright.api.routers import assets as v1_assets
from statewright.api.routers import backfills as v1_backfills
from statewright.api.v2 import schemas_admin as v2a
from statewright.api.v2.common import CONFLICT, NOT_FOUND, PageLimit, display_name
from statewright.api.v2.event_logs import router as event_logs
from statewright.api.v2.row_filters import OrderBy, Pattern, Prefix, every, listed, sort_spec
from statewright.api.v2.row_filters import When as _When
from statewright.db.repositories import asset_events as event_repo

__all__ = ["asset_list", "assets", "backfills", "event_logs", "one_asset"]

assets = APIRouter(tags=["Asset"])
backfills = APIRouter(tags=["Backfill"])


def one_asset(a: dict[str, Any]) -> v2a.Asset:
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


def asset_list(request: Request) -> list[dict[str, Any]]:
    """Every asset as ``/api/v1/assets`` answers it."""
    return list(v1_assets.list_assets(request)["assets"])


_ASSET_ORDER = {k: k for k in ("id", "name", "uri", "created_at", "updated_at")}


@assets.get("/assets", response_model=v2a.AssetCollection)
def get_assets(
    request: Request,
    limit: PageLimit = 50,
    offset: Offset = 0,
    name_pattern: Pattern = None,
    name_prefix_pattern: Prefix = None,
    uri_pattern: Pattern = None,
    uri_prefix_pattern: Prefix = None,
    dag_ids: Annotated[list[str] | None, Query()] = None,
    only_active: Annotated[bool, Query()] = True,
    order_by: OrderBy = None,
) -> v2a.AssetCollection:
    """Assets with the tasks that produce them and the DAGs scheduled on them (every asset a
    DAG names is active)."""
    items = listed(asset_list(request), lambda a: a["uri"], uri_pattern, uri_prefix_pattern,
                   None, _ASSET_ORDER, 10**9, 0)[0]
    if dag_ids:
        items = [a for a in items if set(dag_ids) & (
            set(a["consuming_dags"]) | {p["dag_id"] for p in a["producing_tasks"]})]
    page, total = listed(items, lambda a: a["name"], name_pattern, name_prefix_pattern,
                         order_by, _ASSET_ORDER, limit, offset)
    return v2a.AssetCollection(assets=[one_asset(a) for a in page], total_entries=total)


def _asset_ids(request: Request) -> dict[str, int]:
    return {a["name"]: a["id"] for a in asset_list(request)}


def _event(e: v1_assets.AssetEventOut, ids: dict[str, int]) -> v2a.AssetEvent:
    name = e.asset.get("name")
    return v2a.AssetEvent(
        id=e.id, asset_id=ids.get(name or "", 0), uri=e.asset.get("uri"), name=name,
        group=e.asset.get("group"), extra=e.extra, source_task_id=e.source_task_id,
        source_dag_id=e.source_dag_id, source_run_id=e.source_run_id,
        source_map_index=e.source_map_index, created_dagruns=[], timestamp=e.timestamp,
        partition_key=getattr(e, "partition_key", None))


_EVENT_ORDER = {k: k for k in event_repo.EVENT_ORDER}


@assets.get("/assets/events", response_model=v2a.AssetEventCollection)
def get_asset_events(
    request: Request, limit: PageLimit = 50, offset: Offset = 0, order_by: OrderBy = None,
    asset_id: Annotated[int | None, Query()] = None,
    source_dag_id: Annotated[str | None, Query()] = None,
    source_task_id: Annotated[str | None, Query()] = None,
    source_run_id: Annotated[str | None, Query()] = None,
    source_map_index: Annotated[int | None, Query(ge=-1, le=2**31 - 1)] = None,
    name_pattern: Pattern = None, name_prefix_pattern: Prefix = None,
    timestamp_gte: _When = None, timestamp_gt: _When = None, timestamp_lte: _When = None,
    timestamp_lt: _When = None,
) -> v2a.AssetEventCollection:
    """Asset events, oldest first (``order_by=-timestamp``: newest first)."""
    ids = _asset_ids(request)
    name = next((n for n, i in ids.items() if i == asset_id), None)
    if asset_id is not None and name is None:
        return v2a.AssetEventCollection(asset_events=[], total_entries=0)
    f = event_repo.EventFilter(
        asset_name=name, source_dag_id=source_dag_id, source_task_id=source_task_id,
        source_run_id=source_run_id, source_map_index=source_map_index,
        name_pattern=name_pattern, name_prefix=name_prefix_pattern,
        timestamp=(timestamp_gte, timestamp_gt, timestamp_lte, timestamp_lt))
    with reading(request) as conn:
        rows, total = event_repo.page_events(
            conn, f, order=sort_spec(order_by, _EVENT_ORDER, "timestamp"), limit=limit,
            offset=offset)
    return v2a.AssetEventCollection(
        asset_events=[_event(v1_assets.AssetEventOut(**e), ids) for e in rows],
        total_entries=total)


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
                   offset: Offset = 0, order_by: OrderBy = None) -> v2a.BackfillCollection:
    """The backfills of a DAG (by id; ``order_by=-id``: newest first)."""
    rows = every(partial(v1_backfills.list_backfills, request, dag_id), "backfills")
    page, total = listed(rows, lambda b: None, None, None, order_by, {"id": "id"}, limit,
                         offset)
    return v2a.BackfillCollection(backfills=[_backfill(request, b) for b in page],
                                  total_entries=total)


BackfillId = Annotated[int, Path(ge=1, le=2**31 - 1)]


@backfills.post("/backfills", response_model=v2a.Backfill, responses={**NOT_FOUND, **CONFLICT})
def create_backfill(request: Request, body: v2a.BackfillPostBody) -> v2a.Backfill:
    """Create a backfill of a DAG's scheduled times in ``from_date``..``to_date`` (the same
    service as ``statewright backfill``; runs on the DAG's current version)."""
    made = v1_backfills.create_backfill(request, _v1_body(body))
    return _backfill(request, made)


def _v1_body(body: v2a.BackfillPostBody) -> v1_backfills.BackfillPostBody:
    return v1_backfills.BackfillPostBody(**body.model_dump(exclude={"run_on_latest_version"}))


@backfills.post("/backfills/dry_run", response_model=v2a.DryRunBackfillCollection,
                responses={**NOT_FOUND, **CONFLICT})
def create_backfill_dry_run(request: Request, body: v2a.BackfillPostBody
                            ) -> v2a.DryRunBackfillCollection:
    """The logical dates a backfill would run (create or run again); nothing is changed."""
    plan = v1_backfills.create_backfill_dry_run(request, _v1_body(body))
    dates = [v2a.DryRunBackfill(logical_date=d.logical_date) for d in plan.backfills
             if d.action != "skip"]
    return v2a.DryRunBackfillCollection(backfills=dates, total_entries=len(dates))


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
