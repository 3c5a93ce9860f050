"""``/api/v2/…/taskInstances/{task_id}[/{map_index}]/tries[/{task_try_number}]``: each try of a
task instance (what ``/api/v1``'s task instance detail lists under ``tries``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from statewright.api import reads
from statewright.api import schemas as v1
from statewright.api.deps import reading
from statewright.api.errors import NotFound
from statewright.api.v2 import adapt
from statewright.api.v2 import schemas as v2
from statewright.api.v2.common import NOT_FOUND, display_name

router = APIRouter(tags=["Task Instance"])
_ONE = "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}"
_TRY = Annotated[int, Path(ge=1)]
_MI = Annotated[int, Query(ge=-1)]


def tries_of(request: Request, dag_id: str, run_id: str, task_id: str, map_index: int
           ) -> list[v2.TaskInstanceTry]:
    with reading(request) as conn:
        ti = reads.get_task_instance(conn, dag_id, run_id, task_id, map_index)
    name = display_name(request, dag_id)
    return [_try(ti, t, name) for t in ti.tries]


def _try(ti: v1.TaskInstanceDetail, t: v1.Try, dag_display_name: str) -> v2.TaskInstanceTry:
    return v2.TaskInstanceTry(
        task_id=ti.task_id, dag_id=ti.dag_id, dag_run_id=ti.dag_run_id, map_index=ti.map_index,
        start_date=t.start_date, end_date=t.end_date, duration=t.duration,
        state=adapt.ti_state(t.state), try_number=t.try_number, max_tries=ti.max_tries,
        task_display_name=ti.task_id, dag_display_name=dag_display_name, hostname=t.hostname,
        pool=ti.pool, pool_slots=1, queue=ti.queue, priority_weight=ti.priority_weight,
        operator=ti.operator, operator_name=ti.operator_name or ti.operator, pid=t.pid,
        executor_config="{}")


def one_try(tries: list[v2.TaskInstanceTry], number: int, task_id: str
             ) -> v2.TaskInstanceTry:
    found = next((t for t in tries if t.try_number == number), None)
    if found is None:
        raise NotFound(f"Task {task_id!r} has no try {number}; its tries are "
                       f"{[t.try_number for t in tries]}.")
    return found


@router.get(_ONE + "/tries", response_model=v2.TaskInstanceTryCollection, responses=NOT_FOUND)
def get_task_instance_tries(request: Request, dag_id: str, dag_run_id: str, task_id: str,
                            map_index: _MI = -1) -> v2.TaskInstanceTryCollection:
    """Every try of the task instance, oldest first."""
    tries = tries_of(request, dag_id, dag_run_id, task_id, map_index)
    return v2.TaskInstanceTryCollection(task_instances=tries, total_entries=len(tries))


@router.get(_ONE + "/tries/{task_try_number}", response_model=v2.TaskInstanceTry,
            responses=NOT_FOUND)
def get_task_instance_try_details(request: Request, dag_id: str, dag_run_id: str,
                                  task_id: str, task_try_number: _TRY, map_index: _MI = -1
                                  ) -> v2.TaskInstanceTry:
    """One try."""
    tries = tries_of(request, dag_id, dag_run_id, task_id, map_index)
    return one_try(tries, task_try_number, task_id)


@router.get(_ONE + "/{map_index:int}/tries", response_model=v2.TaskInstanceTryCollection,
            responses=NOT_FOUND)
def get_mapped_task_instance_tries(request: Request, dag_id: str, dag_run_id: str,
                                   task_id: str, map_index: int
                                   ) -> v2.TaskInstanceTryCollection:
    """Every try of one instance of a mapped task."""
    return get_task_instance_tries(request, dag_id, dag_run_id, task_id, map_index)


@router.get(_ONE + "/{map_index:int}/tries/{task_try_number}",
            response_model=v2.TaskInstanceTry, responses=NOT_FOUND)
def get_mapped_task_instance_try_details(request: Request, dag_id: str, dag_run_id: str,
                                         task_id: str, map_index: int, task_try_number: _TRY
                                         ) -> v2.TaskInstanceTry:
    """One try of one instance of a mapped task."""
    tries = tries_of(request, dag_id, dag_run_id, task_id, map_index)
    return one_try(tries, task_try_number, task_id)
