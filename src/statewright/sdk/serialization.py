"""``DAG.serialize()``: the plain-JSON description of a DAG that the scheduler reads.

The scheduler never imports user code, so everything it decides on (graph, trigger rules,
retries, pools, timeouts, schedule) is here. Tasks are listed in topological order.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from statewright.sdk._validation import seconds_or_none
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
        "schedule": serialize_schedule(dag.schedule),
        "start_date": _iso(dag.start_date),
        "end_date": _iso(dag.end_date),
        "timezone": timezone_name(dag.timezone),
        "catchup": dag.catchup,
        "max_active_runs": dag.max_active_runs,
        "max_active_tasks": dag.max_active_tasks,
        "fail_stop": dag.fail_stop,
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
    }


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


def serialize_schedule(schedule: Any) -> Any:
    if is_asset_schedule(schedule):
        return serialize_assets(schedule)
    if isinstance(schedule, timedelta):
        return {"timedelta_seconds": schedule.total_seconds()}
    return schedule


def serialize_task(task: BaseOperator) -> dict[str, Any]:
    return {
        "task_id": task.task_id,
        "operator": task.task_type if task.is_mapped else type(task).__name__,
        "task_group": _group_of(task),
        **_mapping(task),
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
