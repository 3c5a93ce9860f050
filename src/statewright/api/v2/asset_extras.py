"""``/api/v2`` one asset, materializing it (a run of the DAG that produces it), asset aliases,
and the queued asset events of DAGs (the events an asset-scheduled DAG has received and not
yet consumed into a run): read them, or delete them so that no run is triggered by them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request, Response

from statewright.api.deps import Offset, reading, writing
from statewright.api.errors import Conflict, NotFound
from statewright.api.v2 import dag_runs as v2_runs
from statewright.api.v2 import schemas as v2v
from statewright.api.v2 import schemas_admin as v2a
from statewright.api.v2 import schemas_system as v2
from statewright.api.v2.common import CONFLICT, NOT_FOUND, PageLimit
from statewright.api.v2.misc import asset_list, one_asset
from statewright.api.v2.row_filters import OrderBy, Pattern, Prefix, When, listed
from statewright.db.repositories import asset_events as event_repo
from statewright.db.repositories import assets as asset_repo
from statewright.db.repositories import dags as dag_repo

router = APIRouter(tags=["Asset"])

AssetId = Annotated[int, Path(ge=1, le=2**31 - 1)]
Before = When


@router.get("/assets/aliases", response_model=v2.AssetAliasCollection)
def get_asset_aliases(request: Request, limit: PageLimit = 50, offset: Offset = 0,
                      name_pattern: Pattern = None, name_prefix_pattern: Prefix = None,
                      order_by: OrderBy = None) -> v2.AssetAliasCollection:
    """The asset aliases DAGs name."""
    with reading(request) as conn:
        rows = asset_repo.list_aliases(conn)
    page, total = listed(rows, lambda a: a.name, name_pattern, name_prefix_pattern, order_by,
                         {"id": "id", "name": "name"}, limit, offset)
    return v2.AssetAliasCollection(
        asset_aliases=[v2.AssetAliasOut(id=a.id, name=a.name, group=a.group) for a in page],
        total_entries=total)


@router.get("/assets/aliases/{asset_alias_id}", response_model=v2.AssetAliasOut,
            responses=NOT_FOUND)
def get_asset_alias(request: Request, asset_alias_id: AssetId) -> v2.AssetAliasOut:
    """One asset alias."""
    with reading(request) as conn:
        found = next((a for a in asset_repo.list_aliases(conn) if a.id == asset_alias_id), None)
    if found is None:
        raise NotFound(f"The Asset Alias with ID: `{asset_alias_id}` was not found")
    return v2.AssetAliasOut(id=found.id, name=found.name, group=found.group)


@router.get("/assets/{asset_id}", response_model=v2a.Asset, responses=NOT_FOUND)
def get_asset(request: Request, asset_id: AssetId) -> v2a.Asset:
    """One asset, with the tasks that produce it and the DAGs scheduled on it."""
    found = next((a for a in asset_list(request) if a["id"] == asset_id), None)
    if found is None:
        raise NotFound(f"The Asset with ID: `{asset_id}` was not found")
    return one_asset(found)


@router.post("/assets/{asset_id}/materialize", response_model=v2v.DagRunResponse,
             responses={**NOT_FOUND, **CONFLICT})
def materialize_asset(request: Request, asset_id: AssetId,
                      body: v2v.TriggerDagRunBody | None = None) -> v2v.DagRunResponse:
    """Trigger a run of the DAG whose task produces the asset (409 when several DAGs do), as
    ``POST /dags/{dag_id}/dagRuns`` with the same body."""
    found = next((a for a in asset_list(request) if a["id"] == asset_id), None)
    if found is None:
        raise NotFound(f"The Asset with ID: `{asset_id}` was not found")
    dags = sorted({p["dag_id"] for p in found["producing_tasks"]})
    if not dags:
        raise NotFound(f"No DAG materializes asset with ID: {asset_id}")
    if len(dags) > 1:
        raise Conflict(f"More than one DAG materializes asset with ID: {asset_id} "
                       f"({', '.join(dags)}); trigger one of them. Nothing was created.")
    return v2_runs.trigger_dag_run(request, dags[0], body or v2v.TriggerDagRunBody())


def _queued(request: Request, dag_id: str | None, asset_id: int | None,
            before: datetime | None, missing: str) -> list[v2.QueuedEvent]:
    with reading(request) as conn:
        rows = event_repo.queued_pairs(conn, dag_id=dag_id, asset_id=asset_id, before=before)
        names = {d: _display(dag_repo.get_dag(conn, d)) for d in {r.target_dag_id for r in rows}}
    if not rows:
        raise NotFound(missing)
    return [v2.QueuedEvent(dag_id=r.target_dag_id, asset_id=r.asset_id,
                           created_at=r.created_at, dag_display_name=names[r.target_dag_id])
            for r in rows]


def _display(row: Any) -> str:
    ser = getattr(row, "serialized", None) or {}
    return str(ser.get("dag_display_name") or getattr(row, "dag_id", ""))


def _delete(request: Request, dag_id: str | None, asset_id: int | None,
            before: datetime | None, missing: str) -> Response:
    with writing(request) as conn:
        deleted = event_repo.delete_queued(conn, dag_id=dag_id, asset_id=asset_id,
                                           before=before)
    if not deleted:
        raise NotFound(missing)
    return Response(status_code=204)


def _of_asset(asset_id: int) -> str:
    return f"Queue event with asset_id: `{asset_id}` was not found"


def _of_dag(dag_id: str) -> str:
    return f"Queue event with dag_id: `{dag_id}` was not found"


def _of_pair(dag_id: str, asset_id: int) -> str:
    return f"Queued event with dag_id: `{dag_id}` and asset_id: `{asset_id}` was not found"


@router.get("/assets/{asset_id}/queuedEvents", response_model=v2.QueuedEventCollection,
            responses=NOT_FOUND)
def get_asset_queued_events(request: Request, asset_id: AssetId, before: Before = None
                            ) -> v2.QueuedEventCollection:
    """The DAGs with events of this asset queued (not yet consumed into a run)."""
    rows = _queued(request, None, asset_id, before, _of_asset(asset_id))
    return v2.QueuedEventCollection(queued_events=rows, total_entries=len(rows))


@router.delete("/assets/{asset_id}/queuedEvents", status_code=204, responses=NOT_FOUND)
def delete_asset_queued_events(request: Request, asset_id: AssetId, before: Before = None
                               ) -> Response:
    """Forget the queued events of this asset, for every DAG: they trigger no run."""
    return _delete(request, None, asset_id, before, _of_asset(asset_id))


@router.get("/dags/{dag_id}/assets/queuedEvents", response_model=v2.QueuedEventCollection,
            responses=NOT_FOUND)
def get_dag_asset_queued_events(request: Request, dag_id: str, before: Before = None
                                ) -> v2.QueuedEventCollection:
    """The assets with events queued for this DAG."""
    rows = _queued(request, dag_id, None, before, _of_dag(dag_id))
    return v2.QueuedEventCollection(queued_events=rows, total_entries=len(rows))


@router.delete("/dags/{dag_id}/assets/queuedEvents", status_code=204, responses=NOT_FOUND)
def delete_dag_asset_queued_events(request: Request, dag_id: str, before: Before = None
                                   ) -> Response:
    """Forget the events queued for this DAG: they trigger no run of it."""
    return _delete(request, dag_id, None, before, _of_dag(dag_id))


@router.get("/dags/{dag_id}/assets/{asset_id}/queuedEvents", response_model=v2.QueuedEvent,
            responses=NOT_FOUND)
def get_dag_asset_queued_event(request: Request, dag_id: str, asset_id: AssetId,
                               before: Before = None) -> v2.QueuedEvent:
    """Whether (since when) events of this asset are queued for this DAG."""
    return _queued(request, dag_id, asset_id, before, _of_pair(dag_id, asset_id))[0]


@router.delete("/dags/{dag_id}/assets/{asset_id}/queuedEvents", status_code=204,
               responses=NOT_FOUND)
def delete_dag_asset_queued_event(request: Request, dag_id: str, asset_id: AssetId,
                                  before: Before = None) -> Response:
    """Forget the events of this asset queued for this DAG."""
    return _delete(request, dag_id, asset_id, before, _of_pair(dag_id, asset_id))
