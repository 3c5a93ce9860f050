"""Airflow 3.3's public REST API under ``/api/v2`` (its OpenAPI document is the contract), for
the official client ``apache-airflow-client`` and scripts written against Airflow: thin
routers that call the reads and services ``/api/v1`` calls and answer Airflow's shapes. The
differences that remain are listed in docs/api.md."""

from __future__ import annotations

from fastapi import Depends

from statewright.api.v2 import (
    admin,
    asset_extras,
    bulk,
    dag_meta,
    dag_runs,
    dags,
    favorites,
    hitl,
    misc,
    monitor,
    state_stores,
    system,
    task_instances,
    tries,
    versions,
)
from statewright.api.v2.common import served_parameters_only

PREFIX = "/api/v2"
DEPENDENCIES = [Depends(served_parameters_only)]

ROUTERS = (monitor.version_router, monitor.router, dags.router, dags.errors_router,
           dag_runs.router, dag_runs.ti_router, task_instances.xcom_router,
           tries.router, task_instances.router, admin.connections, admin.variables, admin.pools,
           misc.event_logs, misc.assets, misc.backfills, bulk.router,
           # after misc.assets: /assets/{asset_id} must not take /assets/events
           asset_extras.router, versions.router, versions.sources, state_stores.tasks,
           state_stores.assets, hitl.router, system.config,
           system.jobs, system.plugins, system.providers, dag_meta.stats, dag_meta.warnings,
           dag_meta.tags, dag_meta.import_errors, favorites.router)

__all__ = ["DEPENDENCIES", "PREFIX", "ROUTERS"]
