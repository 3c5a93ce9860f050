"""``/api/v2/version`` and ``/api/v2/monitor/health``: public, as in Airflow."""

from __future__ import annotations

import json

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from statewright.api import schemas as v1
from statewright.api.auth.permissions import PUBLIC
from statewright.api.routers import monitor as v1_monitor
from statewright.api.v2 import schemas as v2

router = APIRouter(tags=["Monitor"])
version_router = APIRouter(tags=["Version"])

_UNKNOWN = v1.ComponentHealth(status="unknown")


def _beat(part: v1.ComponentHealth | None) -> tuple[str | None, str | None]:
    if part is None:  # no such job has ever run: unhealthy, as Airflow answers
        return "unhealthy", None
    at = part.latest_heartbeat.isoformat() if part.latest_heartbeat else None
    return part.status, at


@router.get("/monitor/health", response_model=v2.HealthInfo, openapi_extra=PUBLIC)
def get_health(request: Request) -> v2.HealthInfo:
    """The metadatabase and the latest heartbeat of the scheduler, triggerer and DAG processor
    (the same check as ``/api/v1/health``; always 200, the statuses say the rest)."""
    answer = v1_monitor.health(request)
    if isinstance(answer, JSONResponse):
        health = v1.Health.model_validate(json.loads(bytes(answer.body)))
    else:
        health = answer
    sched = _beat(health.scheduler)
    trig = _beat(health.triggerer)
    proc = _beat(health.jobs.get("dag_processor"))
    return v2.HealthInfo(
        metadatabase=v2.ComponentInfo(status=health.metadatabase.status),
        scheduler=v2.SchedulerInfo(status=sched[0], latest_scheduler_heartbeat=sched[1]),
        triggerer=v2.TriggererInfo(status=trig[0], latest_triggerer_heartbeat=trig[1]),
        dag_processor=v2.DagProcessorInfo(status=proc[0], latest_dag_processor_heartbeat=proc[1]),
    )


@version_router.get("/version", response_model=v2.VersionInfo, openapi_extra=PUBLIC)
def get_version(request: Request) -> v2.VersionInfo:
    """statewright's version (``git_version`` null)."""
    return v2.VersionInfo(version=request.app.version, git_version=None)
