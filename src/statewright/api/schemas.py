"""Request and response bodies of the REST API (pydantic). Names follow Airflow 3's API."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StrictBool

# -- requests -------------------------------------------------------------------------------


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DagPatch(_Request):
    is_paused: StrictBool


class TriggerDagRunBody(_Request):
    dag_run_id: str | None = Field(
        default=None, min_length=1, max_length=250, pattern=r"^[^/\s][^/]*$",
        description="The new run's id (default manual__<time>); no slash.")
    conf: dict[str, Any] | None = Field(
        default=None, description="A JSON object passed to the run as dag_run.conf.")
    logical_date: AwareDatetime | None = Field(
        default=None, description="With a timezone, e.g. 2026-01-01T00:00:00Z (default now).")
    partition_key: str | None = Field(
        default=None, min_length=1, max_length=250,
        description="The run's partition key; it must match the DAG's timetable.")


RunTarget = Literal["success", "failed", "cancelled", "paused", "running"]


class DagRunPatch(_Request):
    state: RunTarget
    input: Any = Field(
        default=None, description="With state 'running': the input a paused flow run waits "
        "for (pause_flow_run(wait_for_input=...)), checked against its JSON schema.")


class ClearBody(_Request):
    dry_run: StrictBool = False
    only_failed: StrictBool = False
    include_upstream: StrictBool = False
    include_downstream: StrictBool = False
    task_ids: list[str] | None = Field(
        default=None, description="Tasks to clear (default: all of the run's).")
    clear_state: StrictBool = Field(
        default=False, description="Also delete the cleared tasks' task state.")
    recursive: StrictBool = Field(
        default=True, description="Follow the cleared tasks' ExternalTaskMarkers into other DAGs.")


class TaskClearBody(_Request):
    dry_run: StrictBool = False
    only_failed: StrictBool = False
    include_upstream: StrictBool = False
    include_downstream: StrictBool = False
    clear_state: StrictBool = Field(
        default=False, description="Also delete the cleared tasks' task state.")
    include_past: StrictBool = Field(
        default=False, description="Also the same tasks in earlier runs (by logical date).")
    include_future: StrictBool = Field(
        default=False, description="Also the same tasks in later runs (by logical date).")
    recursive: StrictBool = Field(
        default=True, description="Follow the cleared tasks' ExternalTaskMarkers into other DAGs.")


class TaskInstancePatch(_Request):
    new_state: Literal["success", "failed"]
    include_upstream: StrictBool = False
    include_downstream: StrictBool = False
    include_past: StrictBool = Field(
        default=False, description="Also the same tasks in earlier runs (by logical date).")
    include_future: StrictBool = Field(
        default=False, description="Also the same tasks in later runs (by logical date).")


# -- responses ------------------------------------------------------------------------------


class RunBrief(BaseModel):
    dag_run_id: str
    state: str
    state_name: str
    run_after: datetime | None = None
    logical_date: datetime | None = None
    start_date: datetime | None = None
    end_date: datetime | None = None


class Dag(BaseModel):
    dag_id: str
    dag_display_name: str | None = None
    """The name to show (the id unless the DAG sets ``dag_display_name``)."""
    kind: Literal["dag", "flow"] = Field(
        default="dag", description="'flow' for a flow (statewright.flows): its task runs are "
        "created as it runs, so it lists no tasks.")
    description: str | None = None
    fileloc: str | None = None
    is_paused: bool
    is_active: bool
    schedule: str | None = None
    tags: list[str] = Field(default_factory=list)
    max_active_runs: int
    max_active_tasks: int
    fail_stop: bool
    next_dagrun: datetime | None = None
    next_dagrun_create_after: datetime | None = None
    last_parsed_at: datetime | None = None
    last_run_state: str | None = None
    last_run: RunBrief | None = None
    recent_runs: list[RunBrief] = Field(
        default_factory=list, description="The newest runs, newest first.")
    owners: list[str] = Field(default_factory=list, description="The tasks' owners.")
    is_favorite: bool = Field(default=False, description="Whether the user asking starred it "
                              "(POST/DELETE /dags/{dag_id}/favorite).")


class DagCollection(BaseModel):
    dags: list[Dag]
    total_entries: int


class Task(BaseModel):
    task_id: str
    operator: str
    operator_name: str | None = Field(
        default=None, description="The name people know it by: '@task' for a decorated task.")
    upstream: list[str]
    downstream: list[str]
    trigger_rule: str
    retries: int
    retry_delay: float | None = None
    retry_exponential_backoff: bool = False
    execution_timeout: float | None = None
    pool: str | None = None
    queue: str | None = None
    priority_weight: int | None = None
    is_sensor: bool = False
    deferrable: bool = False
    is_setup: bool = False
    is_teardown: bool = False
    on_failure_fail_dagrun: bool = False
    task_group: str | None = Field(default=None,
                                   description="Id of the task group the task is in, if any.")


class Dependency(BaseModel):
    source: str
    target: str
    label: str | None = Field(default=None, description="The edge's label (Label), if any.")


class TaskGroupInfo(BaseModel):
    group_id: str
    label: str
    parent: str | None = Field(default=None, description="Id of the enclosing group, if any.")
    tooltip: str = ""
    ui_color: str | None = None
    ui_fgcolor: str | None = None


class DagDetail(Dag):
    doc_md: str | None = None
    timezone: str | None = None
    start_date: str | None = None
    end_date: str | None = None
    catchup: bool | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    tasks: list[Task]
    dependencies: list[Dependency]
    task_groups: list[TaskGroupInfo] = Field(
        default_factory=list, description="Task groups, enclosing groups first.")
    schedule_description: str | None = Field(
        default=None, description="The schedule in words, e.g. 'At 06:00, every day (UTC)'.")


class ParamInfo(BaseModel):
    name: str
    value: Any = Field(description="The default (null when the param has none).")
    has_default: bool = True
    description: str | None = None
    schema_: dict[str, Any] = Field(default_factory=dict, alias="schema")


class DagDetails(DagDetail):
    """Airflow's ``GET /dags/{dag_id}/details``: the DAG as its details page shows it."""

    doc_md_html: str | None = Field(
        default=None, description="doc_md rendered as Markdown and sanitized (an allowlist).")
    timetable_summary: str | None = None
    timetable_description: str = Field(description="The schedule in words.")
    next_dagruns: list[datetime] = Field(
        default_factory=list, description="When the next scheduled runs are due (logical dates).")
    owners: list[str] = Field(default_factory=list)
    default_args: dict[str, Any] = Field(default_factory=dict)
    param_details: list[ParamInfo] = Field(default_factory=list)


class ImportErrorEntry(BaseModel):
    import_error_id: int
    filename: str
    stack_trace: str
    timestamp: datetime


class ImportErrorCollection(BaseModel):
    import_errors: list[ImportErrorEntry]
    total_entries: int


class DagRun(BaseModel):
    dag_id: str
    dag_run_id: str
    run_type: str
    state: str
    state_name: str
    state_message: str | None = None
    logical_date: datetime | None = None
    data_interval_start: datetime | None = None
    data_interval_end: datetime | None = None
    run_after: datetime | None = None
    queued_at: datetime | None = None
    start_date: datetime | None = None
    end_date: datetime | None = None
    duration: float | None = None
    conf: dict[str, Any] = Field(default_factory=dict)
    triggered_by: str | None = None
    clear_number: int = 0
    partition_key: str | None = None
    task_instance_states: dict[str, int] | None = Field(
        default=None, description="state → number of task instances (single-run answers).")
    read_error: str | None = Field(
        default=None, description="Why part of the run is not shown (a conf stored too deep "
        "to answer); null when it is shown whole.")


class DagRunCollection(BaseModel):
    dag_runs: list[DagRun]
    total_entries: int


class TaskInstance(BaseModel):
    dag_id: str
    dag_run_id: str
    task_id: str
    map_index: int
    rendered_map_index: str | None = Field(
        default=None, description="The name map_index_template gave a mapped instance.")
    state: str
    state_name: str
    state_message: str | None = None
    try_number: int
    max_tries: int
    operator: str | None = None
    pool: str
    queue: str
    priority_weight: int
    hostname: str | None = None
    pid: int | None = None
    scheduled_at: datetime | None = None
    queued_at: datetime | None = None
    start_date: datetime | None = None
    end_date: datetime | None = None
    duration: float | None = None
    last_heartbeat_at: datetime | None = None
    next_retry_at: datetime | None = None
    reschedule_date: datetime | None = None
    trigger_id: int | None = None
    trigger_timeout: datetime | None = None


class TaskInstanceCollection(BaseModel):
    task_instances: list[TaskInstance]
    total_entries: int


class Try(BaseModel):
    try_number: int
    state: str
    state_name: str
    state_message: str | None = None
    hostname: str | None = None
    pid: int | None = None
    start_date: datetime | None = None
    end_date: datetime | None = None
    duration: float | None = None
    error: str | None = None
    traceback: str | None = None
    current: bool = Field(default=False, description="The try in progress (no history row yet).")
    dag_version_number: int | None = Field(
        default=None, description="The DAG version the try ran.")
    log_url: str


class TriggerInfo(BaseModel):
    trigger_id: int
    classpath: str
    classname: str
    kwargs: dict[str, Any] | None = Field(
        default=None, description="Its arguments, secrets masked (null: unreadable).")
    waits_for: str = Field(description="What it waits for, in words.")
    created_date: datetime
    triggerer_id: int | None = Field(default=None, description="The triggerer running it.")
    timeout: datetime | None = Field(default=None, description="When the wait times out.")
    next_method: str | None = Field(default=None, description="The method resumed with.")


class TaskInstanceDetail(TaskInstance):
    tries: list[Try]
    operator_name: str | None = Field(
        default=None, description="The name people know it by: '@task' for a decorated task.")
    trigger: TriggerInfo | None = Field(
        default=None, description="A deferred task instance's trigger: what it waits for.")
    doc_md_html: str | None = Field(
        default=None, description="The task's doc_md rendered as Markdown and sanitized.")


class Transition(BaseModel):
    task_id: str | None = None
    map_index: int | None = Field(default=None, description="null for a DAG run's rows")
    from_state: str | None = Field(description="null when the row was created")
    to_state: str
    name: str
    message: str | None = None
    actor: str
    try_number: int | None = None
    at: datetime


class TransitionCollection(BaseModel):
    transitions: list[Transition]
    total_entries: int


class TaskLog(BaseModel):
    dag_id: str
    dag_run_id: str
    task_id: str
    try_number: int
    path: str = Field(description="The log file under the logs folder (never the server's "
                                  "absolute path).")
    size: int
    truncated: bool = Field(description="True when only the end of the file is returned.")
    content: str


class TaskLogChunk(BaseModel):
    """A part of one try's log, from a byte offset, in whole lines."""

    dag_id: str
    dag_run_id: str
    task_id: str
    map_index: int
    try_number: int
    offset: int = Field(description="The byte this part starts at.")
    next_offset: int = Field(description="Where to read on from: nothing is sent twice.")
    size: int = Field(description="The log file's size now.")
    writing: bool = Field(description="True while the try may still write to its log.")
    content: str
    missing: str | None = Field(None, description="Why the try has no log file (yet), when "
                                "it has none: the content is then empty.")


class RunLog(BaseModel):
    """What a flow run logged itself (its start, prints in its body, its final state); a DAG
    run's logs are its task instances' tries'."""

    dag_id: str
    dag_run_id: str
    path: str | None = Field(description="The log file under the logs folder; null when the "
                                         "run has no log of its own here (a DAG run).")
    size: int
    truncated: bool = Field(description="True when only the end of the file is returned.")
    content: str


class GridRun(RunBrief):
    run_type: str
    duration: float | None = None
    dag_version_number: int | None = Field(
        default=None, description="The DAG version the run was created with.")
    version_changed: bool = Field(
        default=False, description="True when the run's DAG version differs from the one of "
        "the run before it (the grid marks the change).")


class GridCell(BaseModel):
    state: str
    state_name: str
    state_message: str | None = None
    try_number: int
    max_tries: int
    start_date: datetime | None = None
    end_date: datetime | None = None
    duration: float | None = None
    map_count: int | None = Field(
        default=None, description="A mapped task: how many instances it expanded to (the "
        "cell then summarizes them: ``state`` is the state they show together).")
    state_counts: dict[str, int] | None = Field(
        default=None, description="A mapped task: its instances per state.")


class GridRow(BaseModel):
    task_id: str
    is_mapped: bool = False
    operator: str | None = None
    operator_name: str | None = None
    role: str | None = Field(default=None, description="'setup' or 'teardown' for those tasks.")
    in_dag: bool = Field(default=True, description="False for a task no longer in the DAG.")
    version_number: int | None = Field(
        default=None, description="A task no longer in the DAG: the newest DAG version that "
        "had it (the version its newest task instance shown ran).")
    task_group: str | None = Field(default=None,
                                   description="Id of the task group the task is in, if any.")
    instances: list[GridCell | None] = Field(description="One per run, in dag_runs order.")


class GridGroupCell(BaseModel):
    state: str = Field(description="The most telling state of the group's task instances.")
    counts: dict[str, int] = Field(description="The group's task instances by state.")


class GridGroup(TaskGroupInfo):
    instances: list[GridGroupCell | None] = Field(description="One per run, in dag_runs order.")


class Grid(BaseModel):
    dag_id: str
    total_entries: int = Field(description="Runs of the DAG (for paging).")
    offset: int
    limit: int
    dag_runs: list[GridRun] = Field(description="The page of runs, oldest to newest.")
    rows: list[GridRow]
    task_groups: list[GridGroup] = Field(
        default_factory=list, description="Task groups, enclosing groups first.")


class CompactGridRow(GridRow):
    instances: list[list[Any] | None] = Field(  # type: ignore[assignment]
        description="One per run, in dag_runs order: the task instance as an array of the values "
        "named by the grid's ``cell_fields``, in that order, its trailing nulls left out "
        "(``[0, 1, 1, 1735689600000, 1735689601500, 1.5]``), or null.")


class CompactGrid(Grid):
    """The grid with ``format=compact``: each cell an array instead of an object."""

    rows: list[CompactGridRow]  # type: ignore[assignment]
    cell_fields: list[str] = Field(
        description="The names of a compact cell's positions: ``state`` (an index into "
        "``states``), ``try_number``, ``max_tries``, ``start_date`` and ``end_date`` (epoch "
        "milliseconds, UTC), ``duration`` (seconds), ``state_message``, and for a mapped task "
        "``map_count`` and ``state_counts`` (as in ``GridCell``).")
    states: list[list[str]] = Field(
        description="The ``[state, state_name]`` pairs the cells' ``state`` indexes point to.")


class ComponentHealth(BaseModel):
    status: Literal["healthy", "unhealthy", "unknown"]
    latest_heartbeat: datetime | None = None
    running_jobs: int = 0


class Health(BaseModel):
    status: Literal["healthy", "unhealthy"]
    metadatabase: ComponentHealth
    scheduler: ComponentHealth | None = None
    triggerer: ComponentHealth | None = None
    jobs: dict[str, ComponentHealth] = Field(default_factory=dict)


class PlannedChange(BaseModel):
    dag_run_id: str | None = None
    task_id: str
    map_index: int = -1
    from_state: str
    to_state: str
    path: list[str]
    name: str | None = None
    try_number: int
    kills_try: bool = False


class PlannedRunChange(BaseModel):
    from_state: str
    to_state: str
    message: str


class PlannedRunChangeOf(PlannedRunChange):
    dag_run_id: str


class ControlResult(BaseModel):
    action: str
    dag_id: str
    dag_run_id: str
    dry_run: bool
    applied: bool = Field(description="False for a dry run or when there was nothing to do.")
    notice: str | None = None
    changes: list[PlannedChange]
    run_change: PlannedRunChange | None = None
    run_changes: list[PlannedRunChangeOf] = Field(
        default_factory=list, description="Every run's change (several with include_past/future).")
    unchanged: list[dict[str, str]] = Field(default_factory=list)
    results_deleted_for: list[str] = Field(default_factory=list)
    description: list[str] = Field(description="The plan in words (as the CLI prints it).")


class XComEntry(BaseModel):
    key: str
    value: Any = Field(description=(
        "The value, readable as JSON: a Decimal as its number, a datetime as its ISO form, an "
        "object as its fields, a DataFrame as a small table (columns, rows, total_rows); what "
        "the XCom backend's orm_deserialize_value gives."))
    type: str | None = Field(default=None, description=(
        "The qualified class name of the value (decimal.Decimal, pandas.core.frame.DataFrame, "
        "...); null for plain JSON data."))
    raw: Any = Field(default=None, description="The value as stored (tagged JSON).")
    timestamp: datetime


class XComCollection(BaseModel):
    xcom_entries: list[XComEntry]
    total_entries: int
