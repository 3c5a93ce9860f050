"""Health: the database, and the heartbeats of the scheduler and triggerer jobs."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from statewright.api import reads
from statewright.api import schemas as s
from statewright.api.auth.permissions import PUBLIC
from statewright.api.deps import reading, settings_of
from statewright.core.clock import utcnow
from statewright.db.repositories import browse

router = APIRouter(tags=["Monitor"])


@router.get("/health", response_model=s.Health, responses={503: {"model": s.Health}},
            openapi_extra=PUBLIC)
def health(request: Request) -> s.Health | JSONResponse:
    """The database (503 when it does not answer) and each job type (scheduler, triggerer, …)
    that has rows in ``job``: healthy when one of its running jobs heartbeated recently. The
    overall ``status`` is healthy when every part is."""
    threshold = timedelta(seconds=settings_of(request).triggerer_health_threshold_seconds)
    try:
        with reading(request) as conn:
            conn.execute(text("SELECT 1"))
            beats = browse.latest_heartbeats(conn)
    except SQLAlchemyError:
        body = s.Health(status="unhealthy",
                        metadatabase=s.ComponentHealth(status="unhealthy"))
        return JSONResponse(body.model_dump(mode="json"), status_code=503)
    now = utcnow()
    jobs = {kind: h for kind, info in beats.items()
            if (h := reads.job_health(info, now, threshold)) is not None}
    ok = all(h.status == "healthy" for h in jobs.values())
    return s.Health(status="healthy" if ok else "unhealthy",
                    metadatabase=s.ComponentHealth(status="healthy"),
                    scheduler=jobs.get("scheduler"), triggerer=jobs.get("triggerer"), jobs=jobs)
