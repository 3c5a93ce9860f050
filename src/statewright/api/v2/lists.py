"""``/api/v2``'s lists of runs, task instances and XCom entries, of one DAG, run and task or of
all (``~``), with Airflow's filters (states, ids, date and duration ranges, patterns,
``order_by``) and its batch forms (``POST …/dagRuns/list``, ``…/taskInstances/list``). The
rows come from one filtered query (``browse_filtered``) and are answered in Airflow's shapes
by ``adapt``; each run and task instance also carries statewright's exact state
(``statewright_state``) and its name (``state_name``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal, NamedTuple

from fastapi import APIRouter, Depends, Path, Query, Request
from sqlalchemy import Connection

from statewright.api import reads
from statewright.api import schemas as v1
from statewright.api.deps import Offset, reading
from statewright.api.errors import ApiError
from statewright.api.v2 import adapt
from statewright.api.v2 import list_filters as lf
from statewright.api.v2 import schemas as v2
from statewright.api.v2.common import NOT_FOUND, PageLimit
from statewright.db.repositories import browse_filtered as bf
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import notes as note_repo

runs_router = APIRouter(tags=["DagRun"])
tis_router = APIRouter(tags=["Task Instance"])
xcom_router = APIRouter(tags=["XCom"])
_TI = "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances"
_ALL = Annotated[Literal["~"], Path()]
_Strings = Annotated[list[str] | None, Query()]
_Ints = Annotated[list[int] | None, Query()]

_RUN_DATES = lf.ranges("run_after", "logical_date", "start_date", "end_date", "updated_at")
_PARTITION_DATES = lf.ranges("partition_date", ops=("gte", "lte"))
_RUN_PATTERNS = lf.patterns(run_id="run_id", dag_id="dag_id", partition_key="partition_key")
_TI_DATES = lf.ranges("run_after", "logical_date", "start_date", "end_date", "updated_at")
_TI_DURATION = lf.ranges("duration", kind=float)
_TI_PATTERNS = lf.patterns(task_display_name="task_id", dag_id="dag_id", run_id="run_id",
                           pool_name="pool", queue_name="queue", operator_name="operator",
                           rendered_map_index="rendered_map_index")
_MAPPED_PATTERNS = lf.patterns(pool_name="pool", queue_name="queue", operator_name="operator",
                               rendered_map_index="rendered_map_index")
_XCOM_DATES = lf.ranges("logical_date", "run_after")
_XCOM_PATTERNS = lf.patterns(xcom_key="key", run_id="run_id", task_id="task_id")


class _Dag(NamedTuple):
    name: str
    operators: dict[str, str]


class _RunDates(NamedTuple):
    logical_date: Any
    run_after: Any
    queued_at: Any


def _dags(conn: Connection, dag_ids: Iterable[str]) -> dict[str, _Dag]:
    """Display name and operator names of each DAG, in one read."""
    found = dag_repo.get_serialized_many(conn, dag_ids)
    out = {}
    for dag_id in set(dag_ids):
        ser = found[dag_id][1] if dag_id in found else {}
        out[dag_id] = _Dag(str(ser.get("dag_display_name") or dag_id),
                           {t["task_id"]: t.get("operator_name") or t.get("operator") or ""
                            for t in ser.get("tasks", [])})
    return out


def _exists(request: Request, dag_id: str, run_id: str = "~", task_id: str = "~") -> None:
    """404 for a DAG, run or task instance named (not ``~``) that is not there."""
    with reading(request) as conn:
        if dag_id != "~" and run_id != "~" and task_id != "~":
            reads.ti_row(conn, dag_id, run_id, task_id, any_index=True)
        elif dag_id != "~" and run_id != "~":
            reads.run_row(conn, dag_id, run_id)
        elif dag_id != "~":
            reads.dag_row(conn, dag_id)


def run_page(request: Request, f: bf.Filters, limit: int, offset: int) -> v2.DagRunCollection:
    with reading(request) as conn:
        rows, total = bf.runs(conn, f, limit=limit, offset=offset)
        dags = _dags(conn, [r.dag_id for r in rows])
        notes = note_repo.of_runs(conn, [r.id for r in rows])
    return v2.DagRunCollection(
        dag_runs=[adapt.dag_run(reads.dag_run(r), dags[r.dag_id].name, notes.get(r.id))
                  for r in rows],
        total_entries=total)


def one_run(request: Request, dag_id: str, run_id: str) -> v2.DagRunResponse:
    """One run in Airflow's shape, with its note (404 naming what is missing)."""
    _exists(request, dag_id, run_id)
    return run_page(request, bf.Filters(values={"dag_id": [dag_id], "run_id": [run_id]}),
                    1, 0).dag_runs[0]


@runs_router.get("/dags/{dag_id}/dagRuns", response_model=v2.DagRunCollection,
                 responses=NOT_FOUND)
def get_dag_runs(
    request: Request, dag_id: str, *, limit: PageLimit = 50, offset: Offset = 0,
    state: _Strings = None, run_type: _Strings = None, order_by: _Strings = None,
    dates: Annotated[list[lf.Range], Depends(_RUN_DATES)],
    partition: Annotated[list[lf.Range], Depends(_PARTITION_DATES)],
    found: Annotated[list[lf.Pattern], Depends(_RUN_PATTERNS)],
) -> v2.DagRunCollection:
    """The runs of a DAG, or of every DAG (``~``); ``order_by`` default ``id``."""
    _exists(request, dag_id)
    f = bf.Filters(values=lf.matching(dag_id=lf.one_or_all(dag_id), state=lf.run_states(state),
                                    run_type=run_type),
                   ranges=[*dates, *partition], patterns=found,
                   order_by=lf.order(order_by, bf.RUN_COLUMNS, ["id"]))
    return run_page(request, f, limit, offset)


def _body_ranges(body: Any) -> list[lf.Range]:
    out = []
    for name, bound in body:
        field, _, op = name.rpartition("_")
        if bound is not None and op in lf.RANGE_OPS and field != "duration":
            out.append((field, op, lf._aware(bound)))
    return out


def _refuse(body: Any, names: Iterable[str], route: str) -> None:
    given = [n for n in names if getattr(body, n) is not None]
    if given:
        raise ApiError(f"Invalid request: {', '.join(given)} not served by statewright's "
                       f"{route} yet (docs/api.md lists what differs). Nothing was read.")


@runs_router.post("/dags/{dag_id}/dagRuns/list", response_model=v2.DagRunCollection,
                  responses=NOT_FOUND)
def get_list_dag_runs_batch(request: Request, dag_id: _ALL, body: v2.DagRunsBatchBody
                            ) -> v2.DagRunCollection:
    """Runs of the DAGs in ``dag_ids`` (all when left out) with the body's filters."""
    _refuse(body, ["conf_contains", "duration_gt", "duration_gte", "duration_lt",
                   "duration_lte"], "POST /dags/~/dagRuns/list")
    f = bf.Filters(values=lf.matching(dag_id=body.dag_ids, state=lf.run_states(body.states)),
                   ranges=_body_ranges(body),
                   order_by=lf.order([body.order_by] if body.order_by else None,
                                     bf.RUN_COLUMNS, ["id"]))
    return run_page(request, f, body.page_limit, body.page_offset)


def ti_page(request: Request, f: bf.Filters, limit: int | None, offset: int
            ) -> v2.TaskInstanceCollection:
    with reading(request) as conn:
        rows, total = bf.task_instances(conn, f, limit=limit, offset=offset)
        dags = _dags(conn, [r.dag_id for r in rows])
        notes = note_repo.of_task_instances(conn, [r.dag_run_id for r in rows])
    shown = []
    for r in rows:
        dag = dags[r.dag_id]
        run = _RunDates(r.run_logical_date, r.run_after, r.run_queued_at)
        shown.append(adapt.task_instance(
            v1.TaskInstance(**reads._ti(r)), run, dag.name,  # type: ignore[arg-type]
            dag.operators.get(r.task_id), notes.get((r.dag_run_id, r.task_id, r.map_index))))
    return v2.TaskInstanceCollection(task_instances=shown, total_entries=total)


def run_tis(request: Request, dag_id: str, run_id: str, task_id: str | None = None,
            map_indexes: list[int] | None = None) -> list[v2.TaskInstanceResponse]:
    """The task instances of a run (of one task, of some map indexes), by map index."""
    f = bf.Filters(values=lf.matching(dag_id=[dag_id], run_id=[run_id],
                                    task_id=[task_id] if task_id else None,
                                    map_index=map_indexes),
                   order_by=["map_index"])
    return ti_page(request, f, None, 0).task_instances


def one_ti(request: Request, dag_id: str, run_id: str, task_id: str, map_index: int
           ) -> v2.TaskInstanceResponse:
    """One task instance in Airflow's shape, with its note (404 naming what is missing)."""
    with reading(request) as conn:
        reads.ti_row(conn, dag_id, run_id, task_id, map_index)
    return run_tis(request, dag_id, run_id, task_id, [map_index])[0]


@tis_router.get(_TI, response_model=v2.TaskInstanceCollection, responses=NOT_FOUND)
def get_task_instances(
    request: Request, dag_id: str, dag_run_id: str, *,
    task_id: Annotated[str | None, Query()] = None, state: _Strings = None,
    map_index: _Ints = None, pool: _Strings = None, queue: _Strings = None,
    operator: _Strings = None, executor: _Strings = None, try_number: _Ints = None,
    limit: PageLimit = 50, offset: Offset = 0, order_by: _Strings = None,
    dates: Annotated[list[lf.Range], Depends(_TI_DATES)],
    duration: Annotated[list[lf.Range], Depends(_TI_DURATION)],
    found: Annotated[list[lf.Pattern], Depends(_TI_PATTERNS)],
) -> v2.TaskInstanceCollection:
    """The task instances of a run, or of every run (``~``) of a DAG or of every DAG;
    ``order_by`` default ``map_index`` (then creation order)."""
    _exists(request, dag_id, dag_run_id)
    f = bf.Filters(
        values=lf.matching(dag_id=lf.one_or_all(dag_id), run_id=lf.one_or_all(dag_run_id),
                         task_id=[task_id] if task_id else None, state=lf.ti_states(state),
                         map_index=map_index, pool=pool, queue=queue, operator=operator,
                         executor=executor, try_number=try_number),
        ranges=[*dates, *duration], patterns=found,
        order_by=lf.order(order_by, bf.TI_COLUMNS, ["map_index"]))
    return ti_page(request, f, limit, offset)


@tis_router.get(_TI + "/{task_id}/listMapped", response_model=v2.TaskInstanceCollection,
                responses=NOT_FOUND)
def get_mapped_task_instances(
    request: Request, dag_id: str, dag_run_id: str, task_id: str, *, state: _Strings = None,
    map_index: _Ints = None, pool: _Strings = None, queue: _Strings = None,
    operator: _Strings = None, executor: _Strings = None, try_number: _Ints = None,
    limit: PageLimit = 50, offset: Offset = 0, order_by: _Strings = None,
    dates: Annotated[list[lf.Range], Depends(_TI_DATES)],
    duration: Annotated[list[lf.Range], Depends(_TI_DURATION)],
    found: Annotated[list[lf.Pattern], Depends(_MAPPED_PATTERNS)],
) -> v2.TaskInstanceCollection:
    """The instances of a mapped task in a run, by map index, with the list's filters."""
    _exists(request, dag_id, dag_run_id, task_id)
    f = bf.Filters(
        values=lf.matching(dag_id=[dag_id], run_id=[dag_run_id], task_id=[task_id],
                         state=lf.ti_states(state), map_index=map_index, pool=pool,
                         queue=queue, operator=operator, executor=executor,
                         try_number=try_number),
        ranges=[*dates, *duration], patterns=found,
        order_by=lf.order(order_by, bf.TI_COLUMNS, ["map_index"]))
    return ti_page(request, f, limit, offset)


@tis_router.post(_TI + "/list", response_model=v2.TaskInstanceCollection, responses=NOT_FOUND)
def get_task_instances_batch(request: Request, dag_id: _ALL, dag_run_id: _ALL,
                             body: v2.TaskInstancesBatchBody) -> v2.TaskInstanceCollection:
    """Task instances of every DAG and run, with the body's filters."""
    duration = [(n.rpartition("_")[0], n.rpartition("_")[2], v) for n, v in body
                if n.startswith("duration_") and v is not None]
    f = bf.Filters(
        values=lf.matching(dag_id=body.dag_ids, run_id=body.dag_run_ids, task_id=body.task_ids,
                         state=lf.ti_states(body.state), pool=body.pool, queue=body.queue,
                         executor=body.executor),
        ranges=[*_body_ranges(body), *duration],
        order_by=lf.order([body.order_by] if body.order_by else None, bf.TI_COLUMNS,
                          ["map_index"]))
    return ti_page(request, f, body.page_limit, body.page_offset)


@xcom_router.get(_TI + "/{task_id}/xcomEntries", response_model=v2.XComCollection,
                 responses=NOT_FOUND)
def get_xcom_entries(
    request: Request, dag_id: str, dag_run_id: str, task_id: str, *,
    xcom_key: Annotated[str | None, Query()] = None,
    map_index: Annotated[int | None, Query(ge=-1)] = None,
    map_index_filter: Annotated[int | None, Query()] = None,
    limit: PageLimit = 50, offset: Offset = 0, order_by: _Strings = None,
    dates: Annotated[list[lf.Range], Depends(_XCOM_DATES)],
    found: Annotated[list[lf.Pattern], Depends(_XCOM_PATTERNS)],
) -> v2.XComCollection:
    """The XCom entries of a task instance, or of every task, run or DAG (``~``), without
    their values (``map_index``: only that map index)."""
    _exists(request, dag_id, dag_run_id, task_id)
    indexes = sorted({i for i in (map_index, map_index_filter) if i is not None})
    if len(indexes) > 1:
        indexes = [-2]  # two different map indexes asked for at once: no entry has both
    f = bf.Filters(
        values=lf.matching(dag_id=lf.one_or_all(dag_id), run_id=lf.one_or_all(dag_run_id),
                         task_id=lf.one_or_all(task_id), key=[xcom_key] if xcom_key else None,
                         map_index=indexes),
        ranges=dates, patterns=found,
        order_by=lf.order(order_by, bf.XCOM_COLUMNS,
                          ["dag_id", "task_id", "run_id", "map_index", "key"]))
    with reading(request) as conn:
        rows, total = bf.xcoms(conn, f, limit=limit, offset=offset)
        dags = _dags(conn, [r.dag_id for r in rows])
    return v2.XComCollection(xcom_entries=[v2.XComEntry(
        key=r.key, timestamp=r.timestamp, logical_date=r.logical_date, map_index=r.map_index,
        task_id=r.task_id, dag_id=r.dag_id, run_id=r.run_id, task_display_name=r.task_id,
        dag_display_name=dags[r.dag_id].name,
        run_after=r.run_after or r.logical_date or r.timestamp) for r in rows],
        total_entries=total)
