"""``DAG.serialize()``: the plain-JSON description of a DAG that the scheduler reads.

The scheduler never imports user code, so everything it decides on (graph, trigger rules,
retries, pools, timeouts, schedule) is here. Tasks are listed in topological order.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from statewright.core import empty_tasks
from statewright.core.timetables import Timetable, serialize_timetable
from statewright.sdk._task_dates import serialize_task_dates
from statewright.sdk._validation import MAX_OPERATOR_NAME, seconds_or_none
from statewright.sdk.assets import is_asset_schedule, serialize_assets, serialize_task_assets
from statewright.sdk.dag import timezone_name

if TYPE_CHECKING:
    from statewright.sdk.baseoperator import BaseOperator
    from statewright.sdk.dag import DAG


def serialize_dag(dag: DAG) -> dict[str, Any]:
    tasks = dag.topological_sort()  # validates first
    return {
        "dag_id": dag.dag_id,
        "fileloc": dag.fileloc,
        "description": dag.description,
        "doc_md": dag.doc_md,
        **({"dag_display_name": dag.dag_display_name}
           if dag.dag_display_name != dag.dag_id else {}),
        "schedule": serialize_schedule(dag.schedule, dag),
        "start_date": _iso(dag.start_date),
        "end_date": _iso(dag.end_date),
        "timezone": timezone_name(dag.timezone),
        "catchup": dag.catchup,
        "max_active_runs": dag.max_active_runs,
        "max_active_tasks": dag.max_active_tasks,
        "fail_stop": dag.fail_stop,
        **({"max_consecutive_failed_dag_runs": dag.max_consecutive_failed_dag_runs}
           if getattr(dag, "max_consecutive_failed_dag_runs", 0) else {}),
        "params": dag.params.dump(),
        "params_spec": dag.params.serialize(),
        "tags": list(dag.tags),
        "is_paused_upon_creation": dag.is_paused_upon_creation,
        "dagrun_timeout": seconds_or_none(dag.dagrun_timeout),
        "has_on_success_callback": bool(dag.on_success_callback),
        "has_on_failure_callback": bool(dag.on_failure_callback),
        "tasks": [serialize_task(task) for task in tasks],
        "task_groups": serialize_task_groups(dag),
        "edge_info": serialize_edge_info(dag),
        **({"deadline": [a.serialize() for a in dag.deadline]} if dag.deadline else {}),
        **_owners_and_defaults(dag, tasks),
    }


def _owners_and_defaults(dag: DAG, tasks: list[BaseOperator]) -> dict[str, Any]:
    """The tasks' owners and the DAG's default_args, for people (the details page); only
    when there are any, so a DAG without them keeps its hash."""
    out: dict[str, Any] = {}
    owners = sorted({t.owner for t in tasks if getattr(t, "owner", None)})
    if owners:
        out["owners"] = owners
    if dag.default_args:
        out["default_args"] = {str(k): _plain(v) for k, v in sorted(dag.default_args.items())}
    return out


def _plain(value: Any) -> Any:
    """A default_args value as JSON: as it is when it is JSON, else as a person reads it."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if callable(value):
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', value)}"
    return str(value)


def serialize_task_groups(dag: DAG) -> list[dict[str, Any]]:
    """The DAG's task groups, parents before children: id, parent, tooltip, colours."""
    return [
        {
            "group_id": group.group_id,
            "label": group.label,
            "parent": None if group.parent_group is None else group.parent_group.group_id,
            "tooltip": group.tooltip,
            "prefix_group_id": group.prefix_group_id,
            "ui_color": group.ui_color,
            "ui_fgcolor": group.ui_fgcolor,
            **({"is_mapped": True} if group.is_mapped else {}),
        }
        for group in dag.task_group.iter_groups()
    ]


def serialize_edge_info(dag: DAG) -> list[dict[str, str]]:
    """Labelled edges (``a >> Label("x") >> b``), sorted by their ends."""
    return [
        {"upstream": up, "downstream": down, "label": info["label"]}
        for up, downs in sorted(dag.edge_info.items())
        for down, info in sorted(downs.items())
        if "label" in info
    ]


def serialize_schedule(schedule: Any, dag: DAG | None = None) -> Any:
    if is_asset_schedule(schedule):
        return serialize_assets(schedule)
    if isinstance(schedule, Timetable):
        bounds: dict[str, Any] = {} if dag is None else {
            "start_date": dag.start_date, "end_date": dag.end_date, "catchup": dag.catchup,
            "now": datetime.now(UTC)}
        return {"timetable": serialize_timetable(schedule, **bounds)}
    if isinstance(schedule, timedelta):
        return {"timedelta_seconds": schedule.total_seconds()}
    return schedule


def serialize_task(task: BaseOperator) -> dict[str, Any]:
    return {
        "task_id": task.task_id,
        "operator": (task.task_type if task.is_mapped
                     else type(task).__name__)[:MAX_OPERATOR_NAME],
        **_operator_name(task),
        "task_group": _group_of(task),
        **({"task_display_name": task.task_display_name}
           if task.task_display_name != task.task_id else {}),
        **({"doc_md": task.doc_md} if getattr(task, "doc_md", None) else {}),
        **_mapping(task),
        **({empty_tasks.FLAG: True}
           if not task.is_mapped and empty_tasks.declares_empty(type(task)) else {}),
        "upstream": sorted(task.upstream_task_ids),
        "downstream": sorted(task.downstream_task_ids),
        "trigger_rule": str(task.trigger_rule),
        "retries": task.retries,
        "retry_delay": task.retry_delay.total_seconds(),
        "retry_exponential_backoff": task.retry_exponential_backoff,
        "max_retry_delay": seconds_or_none(task.max_retry_delay),
        "execution_timeout": seconds_or_none(task.execution_timeout),
        "priority_weight": task.priority_weight,
        "weight_rule": task.weight_rule,
        "pool": task.pool,
        "pool_slots": task.pool_slots,
        "queue": task.queue,
        "max_active_tis_per_dag": task.max_active_tis_per_dag,
        "depends_on_past": task.depends_on_past,
        "is_sensor": bool(task.is_sensor),
        "deferrable": bool(task.deferrable),
        "is_setup": task.is_setup,
        "is_teardown": task.is_teardown,
        "on_failure_fail_dagrun": task.on_failure_fail_dagrun,
        **serialize_task_dates(task, task.dag),
        **serialize_task_assets(task),
        **(task.serialized_fields() if hasattr(task, "serialized_fields") else {}),
        "has_callbacks": {
            "on_execute": bool(task.on_execute_callback),
            "on_success": bool(task.on_success_callback),
            "on_failure": bool(task.on_failure_callback),
            "on_retry": bool(task.on_retry_callback),
            "on_skipped": bool(task.on_skipped_callback),
            "on_state": bool(task.on_state or task.on_state_change),
        },
    }


def _operator_name(task: BaseOperator) -> dict[str, str]:
    """The name people know the task's operator by (``@task`` for ``_PythonDecoratedOperator``,
    Airflow's ``operator_name``), when it is not the class name."""
    name = getattr(task, "custom_operator_name", None)
    return {"operator_name": name} if name and not task.is_mapped else {}


def _group_of(task: BaseOperator) -> str | None:
    group = task.task_group
    return None if group is None or group.is_root else group.group_id
def _mapping(task: Any) -> dict[str, Any]:
    """A mapped task's expand input (what the scheduler counts the instances from)."""
    limit = {"max_active_tis_per_dagrun": task.max_active_tis_per_dagrun}
    if not task.is_mapped:
        return limit
    group = task.__dict__.get("mapped_task_group")
    return {"expand_input": task.serialize_expand_input(),
            "map_index_template": task.map_index_template,
            "mapped_task_group": None if group is None else group.group_id, **limit}


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()
