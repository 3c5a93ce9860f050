"""DAG runs: trigger, list, read, history, and the run controls (clear, mark, cancel, pause)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from sqlalchemy.exc import IntegrityError

from statewright.api import controls, reads
from statewright.api import schemas as s
from statewright.api.auth.credentials import actor_of
from statewright.api.deps import Limit, Offset, reading, settings_of, writing
from statewright.api.errors import BadRequest, Conflict, NotFound
from statewright.api.limits import check_input
from statewright.core.clock import utcnow
from statewright.core.partitions import PartitionKeyError
from statewright.core.states import DagRunState
from statewright.db.repositories import browse
from statewright.db.repositories import runs as run_repo
from statewright.services.dag_runs import DagNotFound, RunAlreadyExists, RunTooBig, trigger_dag

router = APIRouter(tags=["DAG runs"])
_RUN_STATES = [st.value for st in DagRunState]


@router.post("/dags/{dag_id}/dagRuns", response_model=s.DagRun,
             responses={404: {"description": "Unknown DAG"},
                        409: {"description": "The run id, or a run at the logical date, exists "
                                              "already"},
                        422: {"description": "A partition key the timetable does not give, "
                                              "or more tasks than max_tis_per_run"}})
def trigger(request: Request, dag_id: str, body: s.TriggerDagRunBody) -> s.DagRun:
    """Create a manual run (queued; the scheduler starts it when the DAG is not paused)."""
    check_input(request, body.conf, "conf")
    try:
        with writing(request) as conn:
            pk, _ = trigger_dag(conn, dag_id, now=utcnow(), actor=actor_of(request), conf=body.conf,
                                run_id=body.dag_run_id, logical_date=body.logical_date,
                                partition_key=body.partition_key)
            run = run_repo.get(conn, pk)
    except DagNotFound:
        raise NotFound(f"No DAG with id {dag_id!r} is known (or it is no longer in the DAGs "
                       "folder). GET /api/v1/dags lists the DAGs, GET /api/v1/importErrors the "
                       "files that failed to import. Nothing was created.") from None
    except PartitionKeyError as exc:
        raise BadRequest(f"{exc}. Nothing was created.") from None
    except RunTooBig as exc:
        raise BadRequest(str(exc)) from None
    except RunAlreadyExists as exc:
        raise Conflict(f"{exc} Nothing was created.") from None
    except IntegrityError:
        raise Conflict(f"DAG {dag_id!r} already has a run {body.dag_run_id!r}; pick another "
                       "dag_run_id (or leave it out for manual__<time>). Nothing was created."
                       ) from None
    return reads.dag_run(run)


@router.get("/dags/{dag_id}/dagRuns", response_model=s.DagRunCollection)
def list_runs(
    request: Request,
    dag_id: str,
    limit: Limit = 50,
    offset: Offset = 0,
    state: Annotated[list[str] | None, Query(
        description=f"Only runs in these states ({', '.join(_RUN_STATES)}).")] = None,
    order_by: Annotated[str, Query(
        description=f"One of {', '.join(browse.RUN_ORDERS)}; '-' is descending.")
    ] = "-run_after",
) -> s.DagRunCollection:
    """The runs of a DAG, newest first."""
    states = state or []
    bad = [x for x in states if x not in _RUN_STATES]
    if bad:
        raise BadRequest(f"Invalid request: state {', '.join(map(repr, bad))} is not a DAG run "
                         f"state; use one of {', '.join(_RUN_STATES)}.")
    if order_by not in browse.RUN_ORDERS:
        raise BadRequest(f"Invalid request: order_by {order_by!r} is not supported; use one of "
                         f"{', '.join(browse.RUN_ORDERS)}.")
    with reading(request) as conn:
        return reads.list_runs(conn, dag_id, limit=limit, offset=offset, states=states,
                               order_by=order_by)


@router.get("/dags/{dag_id}/dagRuns/{run_id}", response_model=s.DagRun)
def get_run(request: Request, dag_id: str, run_id: str) -> s.DagRun:
    """One run, with the number of its task instances in each state."""
    with reading(request) as conn:
        return reads.get_run(conn, dag_id, run_id)


@router.get("/dags/{dag_id}/dagRuns/{run_id}/history", response_model=s.TransitionCollection)
def run_history(request: Request, dag_id: str, run_id: str) -> s.TransitionCollection:
    """Every state change of the run and of its task instances, oldest first."""
    with reading(request) as conn:
        return reads.run_history(conn, dag_id, run_id)


@router.get("/dags/{dag_id}/dagRuns/{run_id}/log", response_model=s.RunLog,
            responses={404: {"description": "Unknown run"}})
def run_log(request: Request, dag_id: str, run_id: str,
            max_bytes: Annotated[int, Query(ge=1, le=20_000_000)] = 2_000_000) -> s.RunLog:
    """What a flow run logged itself: its start, prints in the flow's body, its final state
    (its task runs' lines are in their tries' logs). Empty, with a null path, for a run that
    has no log of its own here (a DAG run's logs are its tries')."""
    with reading(request) as conn:
        return reads.run_log(conn, dag_id, run_id, logs_folder=settings_of(request).logs_folder,
                             max_bytes=max_bytes)


@router.patch("/dags/{dag_id}/dagRuns/{run_id}", response_model=s.DagRun,
              responses={409: {"description": "The run cannot take that state now"}})
def patch_run(request: Request, dag_id: str, run_id: str, body: s.DagRunPatch) -> s.DagRun:
    """Mark the run ``success`` or ``failed``, ``cancelled`` (running tries are killed),
    ``paused`` (no new task starts) or ``running`` (resume a paused run)."""
    check_input(request, body.input, "input")
    controls.set_run_state(request, dag_id, run_id, body)
    with reading(request) as conn:
        return reads.get_run(conn, dag_id, run_id)


@router.post("/dags/{dag_id}/dagRuns/{run_id}/clear", response_model=s.ControlResult)
def clear_run(request: Request, dag_id: str, run_id: str, body: s.ClearBody
              ) -> s.ControlResult:
    """Clear task instances of the run (all, or ``task_ids``) so they run again; a finished run
    goes back to queued. ``dry_run`` answers what would change and changes nothing."""
    return controls.clear_run(request, dag_id, run_id, body)


@router.post("/dags/{dag_id}/dagRuns/{run_id}/resume", response_model=s.DagRun,
             responses={404: {"description": "Unknown run"},
                        409: {"description": "The run is not a crashed durable flow run"}})
def resume_crashed_flow_run(request: Request, dag_id: str, run_id: str) -> s.DagRun:
    """Resume a crashed durable flow run (``@flow(durable=True)``): it is queued again
    (``Resuming``) and the scheduler starts the flow's process on it; each task call that
    completed before the crash returns its recorded result instead of running again."""
    from statewright.services.flows.resume import ResumeRefused, resume_run

    with reading(request) as conn:
        reads.run_row(conn, dag_id, run_id)  # 404 for an unknown run
    try:
        with writing(request) as conn:
            resume_run(conn, run_id, dag_id=dag_id, actor=actor_of(request), now=utcnow())
    except ResumeRefused as exc:
        raise Conflict(str(exc)) from None
    with reading(request) as conn:
        return reads.get_run(conn, dag_id, run_id)
