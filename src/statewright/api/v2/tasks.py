"""``/api/v2/dags/{dag_id}/tasks[/{task_id}]``: a DAG's tasks as its stored (serialized) form
says them, in Airflow's ``TaskResponse`` shape."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from statewright.api import reads
from statewright.api.deps import reading
from statewright.api.errors import ApiError, NotFound
from statewright.api.v2.common import NOT_FOUND
from statewright.db.repositories import dags as dag_repo

router = APIRouter(tags=["Task"])


class TimeDelta(BaseModel):
    type_: str = Field(default="TimeDelta", alias="__type")
    days: int
    seconds: int
    microseconds: int


class TaskResponse(BaseModel):
    task_id: str | None = None
    task_display_name: str | None = None
    owner: str | None = None
    start_date: datetime | None = None
    end_date: datetime | None = None
    trigger_rule: str | None = None
    depends_on_past: bool
    wait_for_downstream: bool
    retries: float | None = None
    queue: str | None = None
    pool: str | None = None
    pool_slots: float | None = None
    execution_timeout: TimeDelta | None = None
    retry_delay: TimeDelta | None = None
    retry_exponential_backoff: float
    priority_weight: float | None = None
    weight_rule: str | None = None
    ui_color: str | None = None
    ui_fgcolor: str | None = None
    template_fields: list[str] | None = None
    downstream_task_ids: list[str] | None = None
    doc_md: str | None = None
    operator_name: str | None = None
    params: dict[str, Any] | None = None
    class_ref: dict[str, Any] | None = None
    is_mapped: bool | None = None
    extra_links: list[str]


class TaskCollection(BaseModel):
    tasks: list[TaskResponse]
    total_entries: int


def _delta(seconds: Any) -> TimeDelta | None:
    if seconds is None:
        return None
    d = timedelta(seconds=float(seconds))
    return TimeDelta.model_validate({"__type": "TimeDelta", "days": d.days,
                                     "seconds": d.seconds, "microseconds": d.microseconds})


def _task(t: dict[str, Any], ser: dict[str, Any]) -> TaskResponse:
    backoff = t.get("retry_exponential_backoff")
    return TaskResponse(
        task_id=t["task_id"], task_display_name=t.get("task_display_name") or t["task_id"],
        owner=t.get("owner") or ",".join(ser.get("owners") or []) or None,
        start_date=t.get("start_date") or ser.get("start_date"),
        end_date=t.get("end_date") or ser.get("end_date"), trigger_rule=t.get("trigger_rule"),
        depends_on_past=bool(t.get("depends_on_past")),
        wait_for_downstream=bool(t.get("wait_for_downstream")), retries=t.get("retries"),
        queue=t.get("queue"), pool=t.get("pool"), pool_slots=t.get("pool_slots"),
        execution_timeout=_delta(t.get("execution_timeout")),
        retry_delay=_delta(t.get("retry_delay")),
        retry_exponential_backoff=float(backoff) if isinstance(backoff, int | float) else 0.0,
        priority_weight=t.get("priority_weight"), weight_rule=t.get("weight_rule"),
        ui_color=t.get("ui_color"), ui_fgcolor=t.get("ui_fgcolor"),
        template_fields=t.get("template_fields"),
        downstream_task_ids=list(t.get("downstream") or []), doc_md=t.get("doc_md"),
        operator_name=t.get("operator_name") or t.get("operator"), params=t.get("params"),
        class_ref={"class_name": t.get("operator"), "module_path": None},
        is_mapped="expand_input" in t, extra_links=[])


def _serialized(request: Request, dag_id: str) -> dict[str, Any]:
    with reading(request) as conn:
        reads.dag_row(conn, dag_id)  # 404 for an unknown DAG
        return dag_repo.get_serialized(conn, dag_id) or {}


_ORDERS = ("task_id", "task_display_name", "operator_name", "pool", "queue", "priority_weight",
           "retries", "start_date", "end_date", "trigger_rule", "weight_rule")


def _sort_key(value: Any) -> tuple[bool, Any]:
    return value is None, "" if value is None else value


@router.get("/dags/{dag_id}/tasks", response_model=TaskCollection, responses=NOT_FOUND,
            response_model_by_alias=True)
def get_tasks(request: Request, dag_id: str,
              order_by: Annotated[str, Query()] = "task_id") -> TaskCollection:
    """The DAG's tasks (``order_by`` a field, ``-`` descending; default ``task_id``)."""
    field = order_by.lstrip("-")
    if field not in _ORDERS:
        raise ApiError(f"Ordering with '{field}' is disallowed or the attribute does not exist "
                       f"on the model; use one of {', '.join(_ORDERS)}")
    ser = _serialized(request, dag_id)
    tasks = [_task(t, ser) for t in ser.get("tasks", [])]
    tasks.sort(key=lambda t: _sort_key(getattr(t, field)), reverse=order_by.startswith("-"))
    return TaskCollection(tasks=tasks, total_entries=len(tasks))


@router.get("/dags/{dag_id}/tasks/{task_id}", response_model=TaskResponse,
            responses=NOT_FOUND, response_model_by_alias=True)
def get_task(request: Request, dag_id: str, task_id: str) -> TaskResponse:
    """One task of the DAG."""
    ser = _serialized(request, dag_id)
    found = next((t for t in ser.get("tasks", []) if t["task_id"] == task_id), None)
    if found is None:
        raise NotFound(f"Task with id {task_id} not found")
    return _task(found, ser)
