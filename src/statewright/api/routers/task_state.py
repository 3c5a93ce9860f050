"""Durable state, read only: a task's keys in a run, an asset's keys."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel

from statewright.api.deps import reading
from statewright.services.task_state_view import asset_state, task_state

router = APIRouter(tags=["Task state"])


class TaskStateEntry(BaseModel):
    map_index: int
    key: str
    value: Any
    retention: str
    try_number: int
    """The try that wrote it."""
    updated_at: datetime


class TaskStateCollection(BaseModel):
    entries: list[TaskStateEntry]
    total_entries: int


class AssetStateEntry(BaseModel):
    key: str
    value: Any
    written_by: str | None
    """``dag_id/run_id/task_id`` of the task that wrote it last."""
    try_number: int | None
    updated_at: datetime


class AssetStateCollection(BaseModel):
    asset: str
    entries: list[AssetStateEntry]
    total_entries: int


@router.get("/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}/taskState",
            response_model=TaskStateCollection)
def get_task_state(request: Request, dag_id: str, run_id: str, task_id: str,
                   map_index: Annotated[int | None, Query(ge=-1, le=2**31 - 1)] = None
                   ) -> TaskStateCollection:
    """The keys the task keeps in the run (every map index unless ``map_index`` is given)."""
    with reading(request) as conn:
        rows = task_state(conn, dag_id, run_id, task_id, map_index)
    return TaskStateCollection(entries=[TaskStateEntry(**r) for r in rows],
                               total_entries=len(rows))


@router.get("/assets/state", response_model=AssetStateCollection)
def get_asset_state(request: Request,
                    name: Annotated[str, Query(min_length=1, max_length=1500,
                                               description="The asset's name.")]
                    ) -> AssetStateCollection:
    """The keys kept on an asset by the tasks that produce and consume it."""
    with reading(request) as conn:
        rows = asset_state(conn, name)
    return AssetStateCollection(asset=name, entries=[AssetStateEntry(**r) for r in rows],
                                total_entries=len(rows))
