"""Airflow's ``max_consecutive_failed_dag_runs``: when a run ends failed, the scheduler pauses
its DAG if that many runs in a row have now ended failed (the rule is
``core.failed_runs.pauses_dag``). The pause is an audit log row (owner ``scheduler``, event
``paused``, the failed runs as its detail): ``GET /api/v1/eventLogs?dag_id=...`` and
``statewright dags events DAG_ID`` show it."""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import Connection

from statewright.core.failed_runs import PAUSED_EVENT, pause_reason, pauses_dag
from statewright.db.repositories import dag_pauses
from statewright.services.dag_view import DagView

log = logging.getLogger("statewright.scheduler")


def limit_of(view: DagView) -> int:
    """The DAG's ``max_consecutive_failed_dag_runs`` (0: off, Airflow's default)."""
    return int(view.raw.get("max_consecutive_failed_dag_runs") or 0)


def pause_after_failed_run(conn: Connection, view: DagView, dag_id: str, now: datetime) -> bool:
    """Called when a run of ``dag_id`` has just ended failed; True when the DAG was paused."""
    limit = limit_of(view)
    if limit <= 0:
        return False
    runs = dag_pauses.newest_runs(conn, dag_id, limit)
    if not pauses_dag([r.state for r in runs], limit):
        return False
    reason = pause_reason(limit, [r.run_id for r in runs])
    paused = dag_pauses.pause_by_scheduler(conn, dag_id, at=now, action=PAUSED_EVENT,
                                           reason=reason)
    if paused:
        log.info("Pausing DAG %s: %s", dag_id, reason)
    return paused
