"""The ``/api/v2`` bodies of connections, variables, pools, assets and backfills, in Airflow
3.3's shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_SLOTS = 2**31 - 1


class Connection(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    connection_id: str
    conn_type: str
    description: str | None = None
    host: str | None = None
    login: str | None = None
    schema_: str | None = Field(default=None, alias="schema")
    port: int | None = None
    password: str | None = None
    extra: str | None = None
    team_name: str | None = None


class ConnectionCollection(BaseModel):
    connections: list[Connection]
    total_entries: int


class ConnectionBody(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    connection_id: str = Field(min_length=1, max_length=200, pattern=r"^[\w.-]+$")
    conn_type: str = Field(min_length=1)
    description: str | None = None
    host: str | None = None
    login: str | None = None
    schema_: str | None = Field(default=None, alias="schema")
    port: int | None = None
    password: str | None = None
    extra: str | None = None
    team_name: str | None = None


class VariableBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str = Field(min_length=1, max_length=250)
    value: Any
    description: str | None = None
    team_name: str | None = None


class Variable(BaseModel):
    key: str
    value: str | None = None
    description: str | None = None
    is_encrypted: bool
    team_name: str | None = None


class VariableCollection(BaseModel):
    variables: list[Variable]
    total_entries: int


class Pool(BaseModel):
    name: str
    slots: int
    description: str | None = None
    include_deferred: bool
    occupied_slots: int
    running_slots: int
    queued_slots: int
    scheduled_slots: int
    open_slots: int
    deferred_slots: int
    team_name: str | None = None


class PoolCollection(BaseModel):
    pools: list[Pool]
    total_entries: int


class PoolBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=256)
    slots: int = Field(ge=-1, le=MAX_SLOTS)
    description: str | None = None
    include_deferred: bool = False
    team_name: str | None = None


class PoolPatchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pool: str | None = None
    slots: int | None = Field(default=None, ge=-1, le=MAX_SLOTS)
    description: str | None = None
    include_deferred: bool | None = None
    team_name: str | None = None


class AssetAlias(BaseModel):
    id: int
    name: str
    group: str


class TaskAssetReference(BaseModel):
    dag_id: str
    task_id: str
    created_at: datetime
    updated_at: datetime


class DagScheduleReference(BaseModel):
    dag_id: str
    created_at: datetime
    updated_at: datetime


class LastAssetEvent(BaseModel):
    id: int | None = None
    timestamp: datetime | None = None


class AssetWatcher(BaseModel):
    name: str
    trigger_id: int
    created_date: datetime


class Asset(BaseModel):
    id: int
    name: str
    uri: str
    group: str
    extra: dict[str, Any] | None = None
    created_at: datetime
    updated_at: datetime
    scheduled_dags: list[DagScheduleReference]
    producing_tasks: list[TaskAssetReference]
    consuming_tasks: list[TaskAssetReference]
    aliases: list[AssetAlias]
    watchers: list[AssetWatcher]
    last_asset_event: LastAssetEvent | None = None


class AssetCollection(BaseModel):
    assets: list[Asset]
    total_entries: int


class AssetEvent(BaseModel):
    id: int
    asset_id: int
    uri: str | None = None
    name: str | None = None
    group: str | None = None
    extra: dict[str, Any] | None = None
    source_task_id: str | None = None
    source_dag_id: str | None = None
    source_run_id: str | None = None
    source_map_index: int
    created_dagruns: list[dict[str, Any]]
    timestamp: datetime
    partition_key: str | None = None


class AssetEventCollection(BaseModel):
    asset_events: list[AssetEvent]
    total_entries: int


class CreateAssetEventBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    asset_id: int
    extra: dict[str, Any] = Field(default_factory=dict)
    partition_key: str | None = None
    access_control: dict[str, Any] | None = None


class Backfill(BaseModel):
    id: int
    dag_id: str
    from_date: datetime
    to_date: datetime
    dag_run_conf: dict[str, Any] | None = None
    is_paused: bool
    reprocess_behavior: Literal["failed", "completed", "none"]
    max_active_runs: int
    created_at: datetime
    completed_at: datetime | None = None
    updated_at: datetime
    dag_display_name: str


class BackfillPostBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dag_id: str = Field(min_length=1, max_length=250)
    from_date: datetime
    to_date: datetime
    run_backwards: bool = False
    dag_run_conf: dict[str, Any] = Field(default_factory=dict)
    reprocess_behavior: Literal["failed", "completed", "none"] = "none"
    max_active_runs: int = Field(default=10, ge=1, le=2**31 - 1)
    run_on_latest_version: bool = True


class BackfillCollection(BaseModel):
    backfills: list[Backfill]
    total_entries: int


class DryRunBackfill(BaseModel):
    logical_date: datetime | None = None
    partition_key: str | None = None
    partition_date: datetime | None = None


class DryRunBackfillCollection(BaseModel):
    backfills: list[DryRunBackfill]
    total_entries: int
