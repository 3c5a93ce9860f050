"""The bodies of ``/api/v2`` in the shapes of Airflow 3.3's REST API (its OpenAPI document is
the contract): field names, which ones are required, their types. Values come from the same
reads as ``/api/v1``; ``adapt.py`` converts them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RunState = Literal["queued", "running", "success", "failed"]
RunType = Literal["backfill", "scheduled", "manual", "operator_triggered", "asset_triggered",
                  "asset_materialization"]
TriggeredBy = Literal["cli", "operator", "rest_api", "ui", "test", "timetable", "asset",
                      "backfill"]
TiState = Literal["removed", "scheduled", "queued", "running", "success", "restarting", "failed",
                  "up_for_retry", "up_for_reschedule", "upstream_failed", "skipped", "deferred",
                  "awaiting_input"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class VersionInfo(BaseModel):
    version: str
    git_version: str | None = None


class ComponentInfo(BaseModel):
    status: str | None = None


class SchedulerInfo(ComponentInfo):
    latest_scheduler_heartbeat: str | None = None


class TriggererInfo(ComponentInfo):
    latest_triggerer_heartbeat: str | None = None


class DagProcessorInfo(ComponentInfo):
    latest_dag_processor_heartbeat: str | None = None


class HealthInfo(BaseModel):
    metadatabase: ComponentInfo
    scheduler: SchedulerInfo
    triggerer: TriggererInfo
    dag_processor: DagProcessorInfo | None = None


class DagTag(BaseModel):
    name: str
    dag_id: str
    dag_display_name: str


class DagResponse(BaseModel):
    dag_id: str
    dag_display_name: str
    is_paused: bool
    is_stale: bool
    last_parsed_time: datetime | None = None
    last_parse_duration: float | None = None
    last_expired: datetime | None = None
    bundle_name: str | None = None
    bundle_version: str | None = None
    relative_fileloc: str | None = None
    fileloc: str
    description: str | None = None
    timetable_summary: str | None = None
    timetable_description: str | None = None
    timetable_partitioned: bool
    timetable_periodic: bool
    tags: list[DagTag]
    max_active_tasks: int
    max_active_runs: int | None = None
    max_consecutive_failed_dag_runs: int
    has_task_concurrency_limits: bool
    has_import_errors: bool
    next_dagrun_logical_date: datetime | None = None
    next_dagrun_data_interval_start: datetime | None = None
    next_dagrun_data_interval_end: datetime | None = None
    next_dagrun_run_after: datetime | None = None
    allowed_run_types: list[RunType] | None = None
    owners: list[str]
    file_token: str
    is_backfillable: bool


class DagDetailsResponse(DagResponse):
    catchup: bool
    dag_run_timeout: str | None = None
    asset_expression: dict[str, Any] | None = None
    doc_md: str | None = None
    start_date: datetime | None = None
    end_date: datetime | None = None
    is_paused_upon_creation: bool | None = None
    params: dict[str, Any] | None = None
    render_template_as_native_obj: bool
    template_search_path: list[str] | None = None
    timezone: str | None = None
    last_parsed: datetime | None = None
    default_args: dict[str, Any] | None = None
    owner_links: dict[str, str] | None = None
    is_favorite: bool = False
    active_runs_count: int = 0
    latest_dag_version: DagVersion | None = None
    rerun_with_latest_version: bool | None = None
    concurrency: int


class DagCollection(BaseModel):
    dags: list[DagResponse]
    total_entries: int


class DagPatchBody(_Body):
    is_paused: bool


class DagVersion(BaseModel):
    id: str
    version_number: int
    dag_id: str
    bundle_name: str | None = None
    bundle_version: str | None = None
    created_at: datetime
    dag_display_name: str
    bundle_url: str | None = None


class DagRunResponse(BaseModel):
    dag_run_id: str
    dag_id: str
    logical_date: datetime | None = None
    queued_at: datetime | None = None
    start_date: datetime | None = None
    end_date: datetime | None = None
    duration: float | None = None
    data_interval_start: datetime | None = None
    data_interval_end: datetime | None = None
    run_after: datetime
    last_scheduling_decision: datetime | None = None
    run_type: RunType
    state: RunState
    triggered_by: TriggeredBy | None = None
    triggering_user_name: str | None = None
    conf: dict[str, Any] | None = None
    note: str | None = None
    dag_versions: list[DagVersion]
    bundle_version: str | None = None
    dag_display_name: str
    partition_key: str | None = None
    partition_date: datetime | None = None
    statewright_state: str | None = None
    state_name: str | None = None
    # The run's own type where ``run_type`` (Airflow's closed set) says "manual": "flow".
    statewright_run_type: str | None = None


class DagRunCollection(BaseModel):
    dag_runs: list[DagRunResponse]
    total_entries: int | None = None
    total_entries_limit: int | None = None
    next_cursor: str | None = None
    previous_cursor: str | None = None


class _DateRanges(_Body):
    logical_date_gte: datetime | None = None
    logical_date_gt: datetime | None = None
    logical_date_lte: datetime | None = None
    logical_date_lt: datetime | None = None
    run_after_gte: datetime | None = None
    run_after_gt: datetime | None = None
    run_after_lte: datetime | None = None
    run_after_lt: datetime | None = None
    start_date_gte: datetime | None = None
    start_date_gt: datetime | None = None
    start_date_lte: datetime | None = None
    start_date_lt: datetime | None = None
    end_date_gte: datetime | None = None
    end_date_gt: datetime | None = None
    end_date_lte: datetime | None = None
    end_date_lt: datetime | None = None
    duration_gte: float | None = None
    duration_gt: float | None = None
    duration_lte: float | None = None
    duration_lt: float | None = None
    order_by: str | None = None
    page_offset: int = Field(default=0, ge=0)
    page_limit: int = Field(default=100, ge=0, le=1000)


class DagRunsBatchBody(_DateRanges):
    dag_ids: list[str] | None = None
    states: list[RunState | None] | None = None
    conf_contains: str | None = None


class TaskInstancesBatchBody(_DateRanges):
    dag_ids: list[str] | None = None
    dag_run_ids: list[str] | None = None
    task_ids: list[str] | None = None
    state: list[TiState | None] | None = None
    pool: list[str] | None = None
    queue: list[str] | None = None
    executor: list[str] | None = None


class TriggerDagRunBody(_Body):
    dag_run_id: str | None = Field(default=None, min_length=1, max_length=250,
                                   pattern=r"^[^/\s][^/]*$")
    data_interval_start: datetime | None = None
    data_interval_end: datetime | None = None
    logical_date: datetime | None = None
    run_after: datetime | None = None
    conf: dict[str, Any] | None = None
    note: str | None = None
    partition_key: str | None = Field(default=None, min_length=1, max_length=250)


class DagRunPatchBody(_Body):
    state: Literal["queued", "success", "failed"] | None = None
    note: str | None = Field(default=None, max_length=1000)


class TaskInstanceResponse(BaseModel):
    id: str
    task_id: str
    dag_id: str
    dag_run_id: str
    map_index: int
    logical_date: datetime | None = None
    run_after: datetime
    start_date: datetime | None = None
    end_date: datetime | None = None
    duration: float | None = None
    state: TiState | None = None
    try_number: int
    max_tries: int
    task_display_name: str
    dag_display_name: str
    hostname: str | None = None
    unixname: str | None = None
    pool: str
    pool_slots: int
    queue: str | None = None
    priority_weight: int | None = None
    operator: str | None = None
    operator_name: str | None = None
    queued_when: datetime | None = None
    scheduled_when: datetime | None = None
    pid: int | None = None
    executor: str | None = None
    executor_config: str
    note: str | None = None
    rendered_map_index: str | None = None
    rendered_fields: dict[str, Any] | None = None
    trigger: dict[str, Any] | None = None
    triggerer_job: dict[str, Any] | None = None
    dag_version: DagVersion | None = None
    statewright_state: str | None = None
    state_name: str | None = None


class PatchTaskInstanceBody(_Body):
    new_state: TiState | None = None
    note: str | None = Field(default=None, max_length=1000)
    include_upstream: bool = False
    include_downstream: bool = False
    include_future: bool = False
    include_past: bool = False


class TaskInstanceCollection(BaseModel):
    task_instances: list[TaskInstanceResponse]
    total_entries: int | None = None
    total_entries_limit: int | None = None
    next_cursor: str | None = None
    previous_cursor: str | None = None


class DagRunClearBody(_Body):
    dry_run: bool = True
    only_failed: bool = False
    only_new: bool = False
    run_on_latest_version: bool | None = None
    note: str | None = Field(default=None, max_length=1000)


class ClearTaskInstanceCollection(BaseModel):
    task_instances: list[TaskInstanceResponse]
    total_entries: int


class TaskInstanceTry(BaseModel):
    model_config = ConfigDict(title="TaskInstanceHistoryResponse")
    task_id: str
    dag_id: str
    dag_run_id: str
    map_index: int
    start_date: datetime | None = None
    end_date: datetime | None = None
    duration: float | None = None
    state: TiState | None = None
    try_number: int
    max_tries: int
    task_display_name: str
    dag_display_name: str
    hostname: str | None = None
    unixname: str | None = None
    pool: str
    pool_slots: int
    queue: str | None = None
    priority_weight: int | None = None
    operator: str | None = None
    operator_name: str | None = None
    queued_when: datetime | None = None
    scheduled_when: datetime | None = None
    pid: int | None = None
    executor: str | None = None
    executor_config: str
    dag_version: DagVersion | None = None


class TaskInstanceTryCollection(BaseModel):
    task_instances: list[TaskInstanceTry]
    total_entries: int


class ClearTaskInstancesBody(_Body):
    dry_run: bool = True
    start_date: datetime | None = None
    end_date: datetime | None = None
    only_failed: bool = True
    only_running: bool = False
    reset_dag_runs: bool = True
    task_ids: list[str | list[str | int]] | None = None
    dag_run_id: str | None = None
    include_upstream: bool = False
    include_downstream: bool = False
    include_future: bool = False
    include_past: bool = False
    run_on_latest_version: bool = False
    prevent_running_task: bool = False
    note: str | None = None


class XComEntry(BaseModel):
    key: str
    timestamp: datetime
    logical_date: datetime | None = None
    map_index: int
    task_id: str
    dag_id: str
    run_id: str
    dag_display_name: str
    task_display_name: str
    run_after: datetime


class XComEntryNative(XComEntry):
    value: Any


class XComCollection(BaseModel):
    xcom_entries: list[XComEntry]
    total_entries: int


class LogMessage(BaseModel):
    timestamp: datetime | None = None
    event: str


class TaskLog(BaseModel):
    content: list[LogMessage] | list[str]
    continuation_token: str | None = None


class ImportError_(BaseModel):
    model_config = ConfigDict(title="ImportErrorResponse")
    import_error_id: int
    timestamp: datetime
    filename: str
    bundle_name: str | None = None
    stack_trace: str


class ImportErrorCollection(BaseModel):
    import_errors: list[ImportError_]
    total_entries: int


class EventLog(BaseModel):
    event_log_id: int
    when: datetime
    dag_id: str | None = None
    task_id: str | None = None
    run_id: str | None = None
    map_index: int | None = None
    try_number: int | None = None
    event: str
    logical_date: datetime | None = None
    owner: str | None = None
    extra: str | None = None
    dag_display_name: str | None = None
    task_display_name: str | None = None


class EventLogCollection(BaseModel):
    event_logs: list[EventLog]
    total_entries: int
