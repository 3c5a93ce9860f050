"""From statewright's answers (``api.reads``, the ``/api/v1`` models) to Airflow 3.3's shapes.

Only shapes change here: what a value is comes from the reads ``/api/v1`` uses. Where
statewright has more states than Airflow, the answer carries the nearest Airflow state (a
``paused`` run is ``running``, a ``cancelled`` one ``failed``; see docs/api.md)."""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from typing import Any, cast, get_args

from statewright.api import schemas as v1
from statewright.api.v2 import schemas as v2

_RUN_STATES = set(get_args(v2.RunState))
_RUN_STATE_NEAREST = {"paused": "running", "cancelled": "failed"}
_RUN_TYPES = set(get_args(v2.RunType))
_TRIGGERED_BY = set(get_args(v2.TriggeredBy))
_TI_STATES = set(get_args(v2.TiState))
_TI_STATE_NEAREST = {"cancelled": "failed", "paused": "scheduled", "shutdown": "restarting"}


def run_state(state: str) -> v2.RunState:
    nearest = state if state in _RUN_STATES else _RUN_STATE_NEAREST.get(state, "running")
    return cast(v2.RunState, nearest)


def ti_state(state: str) -> v2.TiState | None:
    # "none" (not yet scheduled) is null, as in Airflow
    return cast(v2.TiState | None, state if state in _TI_STATES else _TI_STATE_NEAREST.get(state))


def file_token(fileloc: str | None) -> str:
    """An opaque token for the DAG file (Airflow signs the path; nothing takes it back yet)."""
    return hashlib.sha256((fileloc or "").encode()).hexdigest()[:32]


def dag(d: v1.Dag, owners: list[str], has_import_errors: bool = False) -> v2.DagResponse:
    name = d.dag_display_name or d.dag_id
    return v2.DagResponse(
        dag_id=d.dag_id, dag_display_name=name, is_paused=d.is_paused, is_stale=not d.is_active,
        last_parsed_time=d.last_parsed_at, fileloc=d.fileloc or "",
        relative_fileloc=(d.fileloc or "").rsplit("/", 1)[-1] or None,
        description=d.description, timetable_summary=d.schedule,
        timetable_description=getattr(d, "schedule_description", None),
        timetable_partitioned=False, timetable_periodic=d.schedule not in (None, "None", "@once"),
        tags=[v2.DagTag(name=t, dag_id=d.dag_id, dag_display_name=name) for t in d.tags],
        max_active_tasks=d.max_active_tasks, max_active_runs=d.max_active_runs,
        max_consecutive_failed_dag_runs=0, has_task_concurrency_limits=False,
        has_import_errors=has_import_errors, next_dagrun_logical_date=d.next_dagrun,
        next_dagrun_run_after=d.next_dagrun_create_after, owners=owners,
        file_token=file_token(d.fileloc), is_backfillable=d.schedule not in (None, "None"),
        bundle_name="dags-folder")


def dag_run(r: v1.DagRun, display_name: str | None = None, note: str | None = None
            ) -> v2.DagRunResponse:
    by = cast(v2.TriggeredBy | None, r.triggered_by if r.triggered_by in _TRIGGERED_BY else None)
    kind = cast(v2.RunType, r.run_type if r.run_type in _RUN_TYPES else "manual")
    return v2.DagRunResponse(
        dag_run_id=r.dag_run_id, dag_id=r.dag_id, logical_date=r.logical_date,
        queued_at=r.queued_at, start_date=r.start_date, end_date=r.end_date,
        duration=r.duration, data_interval_start=r.data_interval_start,
        data_interval_end=r.data_interval_end,
        run_after=r.run_after or r.logical_date or r.queued_at or datetime.min,
        run_type=kind,
        state=run_state(r.state), triggered_by=by, conf=r.conf, dag_versions=[],
        dag_display_name=display_name or r.dag_id, partition_key=r.partition_key,
        note=note, statewright_state=r.state, state_name=r.state_name,
        statewright_run_type=r.run_type)


def ti_uuid(dag_id: str, run_id: str, task_id: str, map_index: int) -> str:
    """A stable id per task instance (statewright's keys are integers; Airflow's UUIDs)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"statewright:{dag_id}/{run_id}/{task_id}/"
                                              f"{map_index}"))


def task_instance(t: v1.TaskInstance, run: v1.DagRun, dag_display_name: str,
                  operator_name: str | None = None, note: str | None = None
                  ) -> v2.TaskInstanceResponse:
    return v2.TaskInstanceResponse(
        id=ti_uuid(t.dag_id, t.dag_run_id, t.task_id, t.map_index), task_id=t.task_id,
        dag_id=t.dag_id, dag_run_id=t.dag_run_id, map_index=t.map_index,
        logical_date=run.logical_date,
        run_after=run.run_after or run.logical_date or run.queued_at or datetime.min,
        start_date=t.start_date, end_date=t.end_date, duration=t.duration,
        state=ti_state(t.state), try_number=t.try_number, max_tries=t.max_tries,
        task_display_name=t.task_id, dag_display_name=dag_display_name, hostname=t.hostname,
        pool=t.pool, pool_slots=1, queue=t.queue, priority_weight=t.priority_weight,
        operator=t.operator, operator_name=operator_name or t.operator,
        queued_when=t.queued_at, scheduled_when=t.scheduled_at, pid=t.pid,
        executor_config="{}", note=note, rendered_map_index=t.rendered_map_index,
        statewright_state=t.state, state_name=t.state_name)


def xcom(e: v1.XComEntry, t: v1.TaskInstance, run: v1.DagRun, dag_display_name: str,
         value: Any = None, *, with_value: bool = False) -> v2.XComEntry:
    fields: dict[str, Any] = dict(
        key=e.key, timestamp=e.timestamp, logical_date=run.logical_date, map_index=t.map_index,
        task_id=t.task_id, dag_id=t.dag_id, run_id=t.dag_run_id,
        dag_display_name=dag_display_name, task_display_name=t.task_id,
        run_after=run.run_after or run.logical_date or e.timestamp)
    if with_value:
        return v2.XComEntryNative(**fields, value=value)
    return v2.XComEntry(**fields)
