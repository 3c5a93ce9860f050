"""Jobs (schedulers, triggerers, … with their heartbeats; Airflow 3's ``/jobs``) and the
triggers deferred task instances wait on, with the triggerer holding each. A trigger's kwargs
are shown with the values of sensitive keys (password, token, …) as ``***``."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from statewright.api.deps import Limit, Offset, reading, settings_of
from statewright.core.clock import utcnow
from statewright.core.errors import StatewrightError
from statewright.db.repositories import jobs as job_repo
from statewright.db.repositories import triggers as trigger_repo

router = APIRouter(tags=["Job"])
TriggererId = Annotated[int | None, Query(ge=1, le=2**31 - 1,
                                          description="Only the triggers this job holds.")]


class JobResponse(BaseModel):
    id: int
    job_type: str
    state: str = Field(description="running or stopped, as the job last recorded it")
    is_alive: bool = Field(description="running and heartbeated within the health threshold")
    hostname: str | None
    pid: int | None
    start_date: datetime
    end_date: datetime | None
    latest_heartbeat: datetime
    heartbeat_age_seconds: float
    capacity: int | None = Field(description="Most triggers a triggerer runs at once")
    held_triggers: int = Field(0, description="Triggers assigned to this job (triggerers)")


class JobCollection(BaseModel):
    jobs: list[JobResponse]
    total_entries: int
    unassigned_triggers: int = Field(description="Triggers no triggerer has claimed")


class TriggerTaskInstance(BaseModel):
    dag_id: str
    run_id: str
    task_id: str
    state: str
    try_number: int
    trigger_timeout: datetime | None


class TriggerResponse(BaseModel):
    id: int
    classpath: str
    kwargs: str | None = Field(description="JSON text; values of sensitive keys are ***")
    kwargs_error: str | None = Field(None, description="Why the kwargs cannot be shown")
    created_date: datetime
    triggerer_id: int | None
    triggerer_hostname: str | None
    triggerer_alive: bool | None
    task_instance: TriggerTaskInstance | None = Field(
        description="The deferred task instance waiting on it (none: orphaned)")


class TriggerCollection(BaseModel):
    triggers: list[TriggerResponse]
    total_entries: int


@router.get("/jobs", response_model=JobCollection)
def list_jobs(request: Request, job_type: str | None = None, hostname: str | None = None,
              is_alive: bool | None = None, limit: Limit = 100,
              offset: Offset = 0) -> JobCollection:
    """Jobs, most recent heartbeat first, with how many triggers each triggerer holds."""
    now = utcnow()
    after = _alive_after(request, now)
    with reading(request) as conn:
        rows, total = job_repo.list_page(conn, job_type=job_type, hostname=hostname,
                                         alive=is_alive, heartbeat_after=after, limit=limit,
                                         offset=offset)
        held = trigger_repo.count_by_triggerer(conn)
    jobs = [JobResponse(
        id=r.id, job_type=r.job_type, state=r.status,
        is_alive=job_repo.is_alive(r.status, r.latest_heartbeat, heartbeat_after=after),
        hostname=r.hostname, pid=r.pid, start_date=r.start_date, end_date=r.end_date,
        latest_heartbeat=r.latest_heartbeat,
        heartbeat_age_seconds=round((now - r.latest_heartbeat).total_seconds(), 3),
        capacity=r.capacity, held_triggers=held.get(r.id, 0),
    ) for r in rows]
    return JobCollection(jobs=jobs, total_entries=total, unassigned_triggers=held.get(None, 0))


def _alive_after(request: Request, now: datetime) -> datetime:
    return now - timedelta(seconds=settings_of(request).triggerer_health_threshold_seconds)


def _kwargs(request: Request, token: str) -> tuple[str | None, str | None]:
    from statewright.api.routers.secrets import cipher_of
    from statewright.crypto import decrypt_json
    from statewright.sdk.masking import redact

    try:
        value = decrypt_json(cipher_of(request), token)
    except StatewrightError as exc:
        return None, str(exc)
    return json.dumps(redact(value), default=str, sort_keys=True), None


@router.get("/triggers", response_model=TriggerCollection)
def list_triggers(request: Request, triggerer_id: TriggererId = None, limit: Limit = 100,
                  offset: Offset = 0) -> TriggerCollection:
    """Triggers, oldest first, with the task instance waiting on each and its triggerer (only
    the triggers one triggerer holds with ``triggerer_id``)."""
    after = _alive_after(request, utcnow())
    with reading(request) as conn:
        rows = trigger_repo.list_with_task_instances(conn, offset + limit,
                                                     triggerer_id=triggerer_id)[offset:]
        tokens = {r.id: r.kwargs for r in trigger_repo.get_many(conn, [r.id for r in rows])}
        held = trigger_repo.count_by_triggerer(conn)
        total = sum(held.values()) if triggerer_id is None else held.get(triggerer_id, 0)
    out: list[TriggerResponse] = []
    for r in rows:
        kwargs, error = _kwargs(request, tokens[r.id]) if r.id in tokens else (None, None)
        alive = None if r.triggerer_id is None else job_repo.is_alive(
            r.triggerer_status, r.triggerer_heartbeat, heartbeat_after=after)
        out.append(TriggerResponse(
            id=r.id, classpath=r.classpath, kwargs=kwargs, kwargs_error=error,
            created_date=r.created_date, triggerer_id=r.triggerer_id,
            triggerer_hostname=r.triggerer_hostname, triggerer_alive=alive,
            task_instance=TriggerTaskInstance(
                dag_id=r.dag_id, run_id=r.run_id, task_id=r.task_id, state=r.state,
                try_number=r.try_number, trigger_timeout=r.trigger_timeout)
            if r.task_id is not None else None))
    return TriggerCollection(triggers=out, total_entries=total)

