"""The REST API's routers, one module per resource; ``ROUTERS`` is mounted under /api/v1."""

from __future__ import annotations

from statewright.api.routers import (
    assets,
    backfills,
    calendar,
    dag_runs,
    dag_versions,
    dags,
    deadlines,
    events,
    favorites,
    hitl,
    monitor,
    notes,
    pools,
    secrets,
    task_instances,
    task_logs,
    task_state,
    templating,
    triggers,
)

ROUTERS = (dags.router, dag_runs.router, task_instances.router, monitor.router,
           templating.router, secrets.router, assets.router, hitl.router, dag_versions.router,
           deadlines.router, task_state.router, notes.router,
           events.router, backfills.router, pools.router, triggers.router, calendar.router,
           favorites.router, task_logs.router)

__all__ = ["ROUTERS"]
