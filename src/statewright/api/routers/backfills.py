"""Backfills, in the shapes of Airflow 3's REST API (``/backfills``): create (or preview with
``/backfills/dry_run``), list, get, pause, unpause, cancel. They call the same service as
``statewright backfill``; each backfill carries its progress (its dates counted by the state of
their run)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from statewright.api.auth.credentials import actor_of
from statewright.api.deps import Limit, Offset, engine_of, reading
from statewright.api.errors import NotFound
from statewright.api.limits import check_input
from statewright.core.clock import utcnow
from statewright.db.repositories import backfills as backfill_repo
from statewright.services import backfill as service

router = APIRouter(tags=["Backfill"])

ReprocessBehavior = Literal["none", "failed", "completed"]
_INT_MAX = 2**31 - 1  # ids and counts are 32-bit integer columns
BackfillId = Annotated[int, Path(ge=1, le=_INT_MAX)]


class BackfillPostBody(BaseModel):
    """What ``statewright backfill`` takes; dates without a time zone are UTC."""

    model_config = ConfigDict(extra="forbid")
    dag_id: str = Field(min_length=1, max_length=250)
    from_date: datetime = Field(description="First logical date of the range (inclusive).")
    to_date: datetime = Field(description="Last logical date of the range (inclusive).")
    run_backwards: bool = False
    dag_run_conf: dict[str, Any] = Field(default_factory=dict)
    reprocess_behavior: ReprocessBehavior = Field(
        "none", description="Dates that have a finished run: leave them (none), run the failed "
                            "ones again (failed), or every finished one (completed).")
    max_active_runs: int = Field(10, ge=1, le=_INT_MAX,
                                 description="Runs of the backfill queued or running at the "
                                             "same time.")


class BackfillProgress(BaseModel):
    total: int = Field(description="Dates of the range.")
    pending: int = Field(description="Dates whose run is still to be created or cleared.")
    skipped: int = Field(description="Dates left alone (a run existed, or the backfill was "
                                     "cancelled first).")
    queued: int = 0
    running: int = 0
    paused: int = 0
    success: int = 0
    failed: int = 0
    cancelled: int = 0


class BackfillResponse(BaseModel):
    id: int
    dag_id: str
    from_date: datetime
    to_date: datetime
    dag_run_conf: dict[str, Any]
    is_paused: bool
    reprocess_behavior: str
    max_active_runs: int
    run_backwards: bool
    created_at: datetime
    completed_at: datetime | None
    updated_at: datetime
    progress: BackfillProgress


class BackfillCollection(BaseModel):
    backfills: list[BackfillResponse]
    total_entries: int


class DryRunBackfillResponse(BaseModel):
    logical_date: datetime
    action: Literal["create", "reprocess", "skip"]
    reason: str | None = Field(None, description="Why the date is skipped.")
    existing_run_id: str | None = None


class DryRunBackfillCollection(BaseModel):
    backfills: list[DryRunBackfillResponse]
    total_entries: int
    dag_is_paused: bool = Field(description="The DAG is paused: its runs start once it is "
                                            "unpaused.")


def _progress(counts: dict[str, int]) -> BackfillProgress:
    known = BackfillProgress.model_fields
    return BackfillProgress(total=sum(counts.values()), pending=counts.get("pending", 0),
                            skipped=counts.get("skipped", 0),
                            **{k: v for k, v in counts.items()
                               if k in known and k not in ("pending", "skipped")})


def _response(row: Any, counts: dict[str, int]) -> BackfillResponse:
    return BackfillResponse(
        id=row.id, dag_id=row.dag_id, from_date=row.from_date, to_date=row.to_date,
        dag_run_conf=row.dag_run_conf or {}, is_paused=bool(row.is_paused),
        reprocess_behavior=row.reprocess_behavior, max_active_runs=row.max_active_runs,
        run_backwards=bool(row.run_backwards), created_at=row.created_at,
        completed_at=row.completed_at, updated_at=row.updated_at, progress=_progress(counts))


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _plan(request: Request, body: BackfillPostBody, *, dry_run: bool) -> service.BackfillPlan:
    check_input(request, body.dag_run_conf, "dag_run_conf")
    try:
        return service.create_backfill(
            engine_of(request), body.dag_id, _utc(body.from_date), _utc(body.to_date),
            reprocess_behavior=body.reprocess_behavior, max_active_runs=body.max_active_runs,
            run_backwards=body.run_backwards, dag_run_conf=body.dag_run_conf, dry_run=dry_run,
            now=utcnow())
    except service.BackfillNotFound as exc:
        raise NotFound(str(exc)) from None


def _one(request: Request, backfill_id: int) -> BackfillResponse:
    with reading(request) as conn:
        row = backfill_repo.get(conn, backfill_id)
        if row is None:
            raise NotFound(f"No backfill with id {backfill_id}; GET /api/v1/backfills lists "
                           "them.")
        counts = backfill_repo.progress(conn, [backfill_id])[backfill_id]
    return _response(row, counts)


@router.get("/backfills", response_model=BackfillCollection)
def list_backfills(request: Request, dag_id: str | None = None, limit: Limit = 100,
                   offset: Offset = 0) -> BackfillCollection:
    """Backfills, newest first (of one DAG with ``dag_id``), each with its progress."""
    with reading(request) as conn:
        rows, total = backfill_repo.list_page(conn, dag_id=dag_id, limit=limit, offset=offset)
        counts = backfill_repo.progress(conn, [r.id for r in rows])
    return BackfillCollection(backfills=[_response(r, counts[r.id]) for r in rows],
                              total_entries=total)


@router.post("/backfills", response_model=BackfillResponse,
             responses={404: {"description": "No such DAG"},
                        409: {"description": "The range or DAG cannot be backfilled"}})
def create_backfill(request: Request, body: BackfillPostBody) -> BackfillResponse:
    """Create a backfill: the scheduler creates a run for every scheduled time of the range, in
    order, at most ``max_active_runs`` at a time. 409 says why a range cannot be backfilled
    (no time-based schedule, end before start, no scheduled time in the range, …)."""
    plan = _plan(request, body, dry_run=False)
    assert plan.backfill_id is not None
    return _one(request, plan.backfill_id)


@router.post("/backfills/dry_run", response_model=DryRunBackfillCollection,
             responses={404: {"description": "No such DAG"}})
def create_backfill_dry_run(request: Request,
                            body: BackfillPostBody) -> DryRunBackfillCollection:
    """What the backfill would do for each date of the range; nothing is changed."""
    plan = _plan(request, body, dry_run=True)
    dates = [DryRunBackfillResponse(logical_date=d.info.logical_date, action=d.action,  # type: ignore[arg-type]
                                    reason=d.reason, existing_run_id=d.existing_run_id)
             for d in plan.dates]
    return DryRunBackfillCollection(backfills=dates, total_entries=len(dates),
                                    dag_is_paused=plan.paused)


@router.get("/backfills/{backfill_id}", response_model=BackfillResponse)
def get_backfill(request: Request, backfill_id: BackfillId) -> BackfillResponse:
    return _one(request, backfill_id)


def _control(request: Request, backfill_id: int, action: str) -> BackfillResponse:
    try:
        if action == "cancel":
            service.cancel_backfill(engine_of(request), backfill_id, actor=actor_of(request),
                                    now=utcnow())
        else:
            service.set_backfill_paused(engine_of(request), backfill_id, action == "pause",
                                        now=utcnow())
    except service.BackfillNotFound as exc:
        raise NotFound(str(exc)) from None
    return _one(request, backfill_id)


_CONTROL_RESPONSES: dict[int | str, dict[str, Any]] = {
    404: {"description": "No such backfill"}, 409: {"description": "The backfill is completed"}}


@router.put("/backfills/{backfill_id}/pause", response_model=BackfillResponse,
            responses=_CONTROL_RESPONSES)
def pause_backfill(request: Request, backfill_id: BackfillId) -> BackfillResponse:
    """No new run of the backfill is created (or cleared); the runs it already made, at most
    its ``max_active_runs``, go on."""
    return _control(request, backfill_id, "pause")


@router.put("/backfills/{backfill_id}/unpause", response_model=BackfillResponse,
            responses=_CONTROL_RESPONSES)
def unpause_backfill(request: Request, backfill_id: BackfillId) -> BackfillResponse:
    """The backfill carries on."""
    return _control(request, backfill_id, "unpause")


@router.put("/backfills/{backfill_id}/cancel", response_model=BackfillResponse,
            responses=_CONTROL_RESPONSES)
def cancel_backfill(request: Request, backfill_id: BackfillId) -> BackfillResponse:
    """Stop the backfill: its queued runs are cancelled, its dates without a run get none,
    running runs finish; the backfill is completed."""
    return _control(request, backfill_id, "cancel")
