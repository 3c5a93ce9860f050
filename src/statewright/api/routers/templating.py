"""Templating and params: a task instance's rendered fields per try; a DAG's params (schemas)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, Field

from statewright.api import reads
from statewright.api.deps import reading
from statewright.api.errors import NotFound
from statewright.db.repositories import rendered_fields as rendered_repo

router = APIRouter(tags=["Templating and params"])
_TI = "/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{task_id}"


class RenderedTry(BaseModel):
    try_number: int
    rendered_fields: dict[str, Any] = Field(
        description="Each template field as the try rendered it (secrets masked).")


class RenderedFields(BaseModel):
    dag_id: str
    run_id: str
    task_id: str
    map_index: int = Field(-1, description="The map index of a mapped task's instance (-1: "
                           "not mapped).")
    dag_kind: Literal["dag", "flow"] = Field(
        "dag", description="\"flow\": a flow's task run, which has no template fields (it "
        "is a function called with its arguments), so rendered_fields stays empty.")
    try_number: int | None = Field(description="The try shown in rendered_fields (the latest "
                                   "try that rendered, unless one was asked for).")
    rendered: bool = Field(False, description="Whether that try recorded rendered fields "
                           "(false: the task has none, or the try ended before rendering).")
    rendered_fields: dict[str, Any]
    tries: list[RenderedTry]


class ParamSpec(BaseModel):
    value: Any = Field(description="The default value (null when the param has none).")
    has_default: bool
    schema_: dict[str, Any] = Field(alias="schema", serialization_alias="schema",
                                    description="The JSON Schema the value must satisfy.")
    description: str | None = None


class DagParams(BaseModel):
    dag_id: str
    params: dict[str, ParamSpec]


_TRY = Annotated[int | None, Query(ge=1, description="One try (default: the latest that "
                                   "rendered).")]
_MI = Annotated[int, Path(ge=0, description="The map index of a mapped task's instance.")]


@router.get(_TI + "/{map_index:int}/renderedFields", response_model=RenderedFields,
            response_model_by_alias=True)
def mapped_rendered_fields(request: Request, dag_id: str, run_id: str, task_id: str,
                           map_index: _MI, try_number: _TRY = None) -> RenderedFields:
    """One map index's template fields as each of its tries rendered them."""
    with reading(request) as conn:
        _, row = reads.ti_row(conn, dag_id, run_id, task_id, map_index)
        kind = reads.dag_row(conn, dag_id).kind
        tries = rendered_repo.for_task_instance(conn, row.id)
    shown = tries[-1] if tries else None
    if try_number is not None:
        shown = next((t for t in tries if t.try_number == try_number), None)
        if shown is None and not 1 <= try_number <= row.try_number:
            label = task_id if map_index < 0 else f"{task_id}[{map_index}]"
            raise NotFound(f"Try {try_number} of task {label!r} in run {run_id!r} of DAG "
                           f"{dag_id!r} does not exist (its tries: 1 to {row.try_number}; "
                           f"tries that rendered fields: "
                           f"{[t.try_number for t in tries] or 'none'}).")
    return RenderedFields(
        dag_id=dag_id, run_id=run_id, task_id=task_id, map_index=map_index,
        dag_kind="flow" if kind == "flow" else "dag", rendered=shown is not None,
        try_number=shown.try_number if shown else try_number,
        rendered_fields=shown.rendered_fields if shown else {},
        tries=[RenderedTry(try_number=t.try_number, rendered_fields=t.rendered_fields)
               for t in tries])


@router.get(_TI + "/renderedFields", response_model=RenderedFields, response_model_by_alias=True)
def rendered_fields(request: Request, dag_id: str, run_id: str, task_id: str,
                    try_number: _TRY = None) -> RenderedFields:
    """The task instance's template fields as each try rendered them (Airflow's
    ``rendered_fields``); a mapped task's instances answer under ``/{map_index}/``."""
    return mapped_rendered_fields(request, dag_id, run_id, task_id, -1, try_number)


@router.get("/dags/{dag_id}/params", response_model=DagParams, response_model_by_alias=True)
def dag_params(request: Request, dag_id: str) -> DagParams:
    """The DAG's params: default, JSON Schema and description of each (the trigger form)."""
    with reading(request) as conn:
        row = reads.dag_row(conn, dag_id)
    spec = row.serialized.get("params_spec")
    if spec is None:  # serialized before params had schemas: plain values
        spec = {k: {"value": v, "has_default": True, "schema": {}, "description": None}
                for k, v in (row.serialized.get("params") or {}).items()}
    return DagParams(dag_id=dag_id, params={k: ParamSpec.model_validate(v)
                                            for k, v in spec.items()})
