"""``/api/v2`` task state store and asset state store (Airflow 3.3's ``state-store`` routes)
over statewright's durable task and asset state: read as ``/api/v1``'s ``taskState`` and
``assets/state`` do, changed by a person through ``services.task_state_admin``."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict

from statewright.api.deps import Offset, engine_of, reading
from statewright.api.errors import ApiError, NotFound
from statewright.api.v2.common import NOT_FOUND, PageLimit
from statewright.api.v2.misc import asset_list
from statewright.core.clock import utcnow
from statewright.core.task_state import NEVER_EXPIRE, TaskStateError, retention_of
from statewright.db.repositories.task_state import TaskKey
from statewright.services import task_state_admin as admin
from statewright.services.task_state_view import asset_state, task_state

tasks = APIRouter(tags=["TaskStateStore"])
assets = APIRouter(tags=["AssetStateStore"])

_TI = "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/state-store"
MapIndex = Annotated[int, Query(ge=-1, le=2**31 - 1)]
AssetId = Annotated[int, Path(ge=1, le=2**31 - 1)]
Key = Annotated[str, Path(min_length=1, max_length=250)]


class TaskStateStoreResponse(BaseModel):
    key: str
    value: Any
    updated_at: datetime
    expires_at: datetime | None = None


class TaskStateStoreCollection(BaseModel):
    task_state_store: list[TaskStateStoreResponse]
    total_entries: int


class TaskStateStoreBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: Any
    expires_at: datetime | Literal["default"] | None = "default"


class TaskStateStorePatchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: Any


class AssetStateStoreLastUpdatedBy(BaseModel):
    kind: Literal["task", "watcher", "api"]
    dag_id: str | None = None
    run_id: str | None = None
    task_id: str | None = None
    map_index: int | None = None


class AssetStateStoreResponse(BaseModel):
    key: str
    value: Any
    updated_at: datetime
    last_updated_by: AssetStateStoreLastUpdatedBy | None = None


class AssetStateStoreCollection(BaseModel):
    asset_state_store: list[AssetStateStoreResponse]
    total_entries: int


class AssetStateStoreBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: Any


def _task_rows(request: Request, dag_id: str, run_id: str, task_id: str, map_index: int
               ) -> list[TaskStateStoreResponse]:
    with reading(request) as conn:
        rows = task_state(conn, dag_id, run_id, task_id, map_index)
    return [TaskStateStoreResponse(key=r["key"], value=r["value"], updated_at=r["updated_at"])
            for r in rows]


def _changing(fn: Any, *args: Any, **kwargs: Any) -> Response:
    try:
        fn(*args, **kwargs)
    except (admin.UnknownTaskInstance, admin.UnknownKey) as exc:
        raise NotFound(str(exc)) from None
    except TaskStateError as exc:
        raise ApiError(f"Invalid request: {exc}. Nothing was changed.") from None
    return Response(status_code=204)


@tasks.get(_TI, response_model=TaskStateStoreCollection)
def list_task_state_store(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                          map_index: MapIndex = -1, limit: PageLimit = 50, offset: Offset = 0
                          ) -> TaskStateStoreCollection:
    """The keys a task instance keeps (values kept for a try: only its latest try's)."""
    rows = _task_rows(request, dag_id, dag_run_id, task_id, map_index)
    return TaskStateStoreCollection(task_state_store=rows[offset:offset + limit],
                                    total_entries=len(rows))


@tasks.delete(_TI, status_code=204, responses=NOT_FOUND)
def clear_task_state_store(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                           all_map_indices: Annotated[bool, Query()] = False,
                           map_index: MapIndex = -1) -> Response:
    """Delete every key of the task instance (``all_map_indices``: of every map index)."""
    return _changing(admin.clear_task, engine_of(request),
                     TaskKey(dag_id, dag_run_id, task_id, map_index),
                     all_map_indices=all_map_indices)


@tasks.get(_TI + "/{key}", response_model=TaskStateStoreResponse, responses=NOT_FOUND)
def get_task_state_store(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                         key: Key, map_index: MapIndex = -1) -> TaskStateStoreResponse:
    """One key of the task instance."""
    found = [r for r in _task_rows(request, dag_id, dag_run_id, task_id, map_index)
             if r.key == key]
    if not found:
        raise NotFound(f"Task state store key {key!r} was not found")
    return found[0]


@tasks.put(_TI + "/{key}", status_code=204, responses=NOT_FOUND)
def set_task_state_store(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                         key: Key, body: TaskStateStoreBody, map_index: MapIndex = -1
                         ) -> Response:
    """Create or overwrite a key: ``expires_at`` ``default`` keeps it for the run (cleared
    when the run starts over), null never expires; a time is refused (statewright keeps values
    for a try, a run, or for good)."""
    if isinstance(body.expires_at, datetime):
        raise ApiError("Invalid request: statewright keeps task state for the run "
                       "(expires_at \"default\") or for good (null), not until a time. "
                       "Nothing was changed.")
    retention = NEVER_EXPIRE if body.expires_at is None else retention_of(None)
    return _changing(admin.set_task_value, engine_of(request),
                     TaskKey(dag_id, dag_run_id, task_id, map_index), key, body.value,
                     retention=retention, now=utcnow())


@tasks.patch(_TI + "/{key}", response_model=TaskStateStoreResponse, responses=NOT_FOUND)
def patch_task_state_store(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                           key: Key, body: TaskStateStorePatchBody, map_index: MapIndex = -1
                           ) -> TaskStateStoreResponse:
    """Change the value of an existing key (its retention kept)."""
    _changing(admin.set_task_value, engine_of(request),
              TaskKey(dag_id, dag_run_id, task_id, map_index), key, body.value,
              retention=None, now=utcnow())
    return get_task_state_store(request, dag_id, dag_run_id, task_id, key, map_index)


@tasks.delete(_TI + "/{key}", status_code=204, responses=NOT_FOUND)
def delete_task_state_store(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                            key: Key, map_index: MapIndex = -1) -> Response:
    """Delete a key (nothing to do when there is none)."""
    return _changing(admin.delete_task_value, engine_of(request),
                     TaskKey(dag_id, dag_run_id, task_id, map_index), key, now=utcnow())


def _asset_name(request: Request, asset_id: int) -> str:
    found = next((a["name"] for a in asset_list(request) if a["id"] == asset_id), None)
    if found is None:
        raise NotFound(f"The Asset with ID: `{asset_id}` was not found")
    return str(found)


def _writer(written_by: str | None) -> AssetStateStoreLastUpdatedBy:
    if not written_by:
        return AssetStateStoreLastUpdatedBy(kind="api")
    dag_id, _, rest = written_by.partition("/")
    run_id, _, task_id = rest.rpartition("/")
    return AssetStateStoreLastUpdatedBy(kind="task", dag_id=dag_id, run_id=run_id,
                                        task_id=task_id)


def _asset_rows(request: Request, asset_id: int) -> list[AssetStateStoreResponse]:
    name = _asset_name(request, asset_id)
    with reading(request) as conn:
        rows = asset_state(conn, name)
    return [AssetStateStoreResponse(key=r["key"], value=r["value"], updated_at=r["updated_at"],
                                    last_updated_by=_writer(r["written_by"])) for r in rows]


@assets.get("/assets/{asset_id}/state-store", response_model=AssetStateStoreCollection,
            responses=NOT_FOUND)
def list_asset_state_store(request: Request, asset_id: AssetId, limit: PageLimit = 50,
                           offset: Offset = 0) -> AssetStateStoreCollection:
    """The keys kept on an asset."""
    rows = _asset_rows(request, asset_id)
    return AssetStateStoreCollection(asset_state_store=rows[offset:offset + limit],
                                     total_entries=len(rows))


@assets.delete("/assets/{asset_id}/state-store", status_code=204, responses=NOT_FOUND)
def clear_asset_state_store(request: Request, asset_id: AssetId) -> Response:
    """Delete every key of the asset."""
    return _changing(admin.clear_asset, engine_of(request), _asset_name(request, asset_id),
                     now=utcnow())


@assets.get("/assets/{asset_id}/state-store/{key}", response_model=AssetStateStoreResponse,
            responses=NOT_FOUND)
def get_asset_state_store(request: Request, asset_id: AssetId, key: Key
                          ) -> AssetStateStoreResponse:
    """One key of the asset."""
    found = [r for r in _asset_rows(request, asset_id) if r.key == key]
    if not found:
        raise NotFound(f"Asset state store key {key!r} was not found")
    return found[0]


@assets.put("/assets/{asset_id}/state-store/{key}", status_code=204, responses=NOT_FOUND)
def set_asset_state_store(request: Request, asset_id: AssetId, key: Key,
                          body: AssetStateStoreBody) -> Response:
    """Create or overwrite a key of the asset."""
    return _changing(admin.set_asset_value, engine_of(request), _asset_name(request, asset_id),
                     key, body.value, now=utcnow())


@assets.delete("/assets/{asset_id}/state-store/{key}", status_code=204, responses=NOT_FOUND)
def delete_asset_state_store(request: Request, asset_id: AssetId, key: Key) -> Response:
    """Delete a key of the asset (nothing to do when there is none)."""
    return _changing(admin.delete_asset_value, engine_of(request),
                     _asset_name(request, asset_id), key, now=utcnow())
