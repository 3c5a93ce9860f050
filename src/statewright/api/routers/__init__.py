"""The REST API's routers, one module per resource; ``ROUTERS`` is mounted under /api/v1."""

from __future__ import annotations

from statewright.api.routers import (
    assets,
    dag_runs,
    dags,
    monitor,
    secrets,
    task_instances,
    templating,
)

ROUTERS = (dags.router, dag_runs.router, task_instances.router, monitor.router,
           templating.router, secrets.router, assets.router)

__all__ = ["ROUTERS"]
