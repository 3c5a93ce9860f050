"""The ``/api/v2`` answers of DAG versions and sources, HITL details, config, jobs, plugins,
providers, DAG stats, warnings and tags, asset aliases and queued events, in Airflow 3.3's
shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from statewright.api.v2 import schemas as v2


class DagVersionCollection(BaseModel):
    dag_versions: list[v2.DagVersion]
    total_entries: int


class DagSource(BaseModel):
    content: str | None = None
    dag_id: str
    version_number: int | None = None
    dag_display_name: str


class HITLUser(BaseModel):
    id: str
    name: str


class _HITLFields(BaseModel):
    """What a request for input and its history by try share, but the task instance."""

    options: list[str]
    subject: str
    body: str | None = None
    defaults: list[str] | None = None
    multiple: bool = False
    params: dict[str, Any] = {}
    assigned_users: list[HITLUser] = []
    created_at: datetime
    responded_by_user: HITLUser | None = None
    responded_at: datetime | None = None
    chosen_options: list[str] | None = None
    params_input: dict[str, Any] = {}
    response_received: bool = False


class HITLDetail(_HITLFields):
    task_instance: v2.TaskInstanceResponse


class HITLDetailHistory(_HITLFields):
    """A request for input of one try, its task instance as that try (Airflow's history)."""

    task_instance: v2.TaskInstanceTry


class HITLDetailCollection(BaseModel):
    hitl_details: list[HITLDetail]
    total_entries: int


class UpdateHITLDetailPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chosen_options: list[str] = Field(min_length=1)
    params_input: dict[str, Any] = {}


class HITLDetailResponse(BaseModel):
    responded_by: HITLUser
    responded_at: datetime
    chosen_options: list[str]
    params_input: dict[str, Any] = {}


class ConfigOption(BaseModel):
    key: str
    value: str | tuple[str, str]


class ConfigSection(BaseModel):
    name: str
    options: list[ConfigOption]


class Config(BaseModel):
    sections: list[ConfigSection]


class Job(BaseModel):
    id: int
    dag_id: str | None = None
    state: str | None = None
    job_type: str | None = None
    start_date: datetime | None = None
    end_date: datetime | None = None
    latest_heartbeat: datetime | None = None
    executor_class: str | None = None
    hostname: str | None = None
    unixname: str | None = None
    dag_display_name: str | None = None


class JobCollection(BaseModel):
    jobs: list[Job]
    total_entries: int


class Plugin(BaseModel):
    name: str
    macros: list[str] = []
    flask_blueprints: list[str] = []
    fastapi_apps: list[dict[str, Any]] = []
    fastapi_root_middlewares: list[dict[str, Any]] = []
    external_views: list[dict[str, Any]] = []
    react_apps: list[dict[str, Any]] = []
    appbuilder_views: list[dict[str, Any]] = []
    appbuilder_menu_items: list[dict[str, Any]] = []
    global_operator_extra_links: list[str] = []
    operator_extra_links: list[str] = []
    source: str
    listeners: list[str] = []
    timetables: list[str] = []


class PluginCollection(BaseModel):
    plugins: list[Plugin]
    total_entries: int


class PluginImportError(BaseModel):
    source: str
    error: str


class PluginImportErrorCollection(BaseModel):
    import_errors: list[PluginImportError]
    total_entries: int


class Provider(BaseModel):
    package_name: str
    description: str
    version: str
    documentation_url: str | None = None


class ProviderCollection(BaseModel):
    providers: list[Provider]
    total_entries: int


class DagStatsState(BaseModel):
    state: v2.RunState
    count: int


class DagStats(BaseModel):
    dag_id: str
    dag_display_name: str
    stats: list[DagStatsState]


class DagStatsCollection(BaseModel):
    dags: list[DagStats]
    total_entries: int


class DagWarning(BaseModel):
    dag_id: str
    warning_type: Literal["asset conflict", "non-existent pool", "runtime varying value"]
    message: str
    timestamp: datetime
    dag_display_name: str


class DagWarningCollection(BaseModel):
    dag_warnings: list[DagWarning]
    total_entries: int


class DagTagCollection(BaseModel):
    tags: list[str]
    total_entries: int


class AssetAliasCollection(BaseModel):
    asset_aliases: list[AssetAliasOut]
    total_entries: int


class AssetAliasOut(BaseModel):
    id: int
    name: str
    group: str


class QueuedEvent(BaseModel):
    dag_id: str
    asset_id: int
    created_at: datetime
    dag_display_name: str


class QueuedEventCollection(BaseModel):
    queued_events: list[QueuedEvent]
    total_entries: int


AssetAliasCollection.model_rebuild()
