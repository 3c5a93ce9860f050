"""The REST API's routers, one module per resource; ``ROUTERS`` is mounted under /api/v1."""

from __future__ import annotations

from statewright.api.routers import assets, dag_runs, dags, monitor, task_instances

ROUTERS = (dags.router, dag_runs.router, task_instances.router, monitor.router,
           assets.router)

__all__ = ["ROUTERS"]
