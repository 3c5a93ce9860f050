"""Pauses the scheduler makes: the DAG's newest runs, and a pause with its audit log row."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select, update

from statewright.db.repositories import audit
from statewright.db.tables import dag, dag_run

SCHEDULER = "scheduler"


def newest_runs(conn: Connection, dag_id: str, limit: int) -> list[Any]:
    """The ``limit`` newest runs of ``dag_id`` (run id, state), newest first as Airflow orders
    them: by ``run_after``, then by id."""
    return list(conn.execute(
        select(dag_run.c.run_id, dag_run.c.state)
        .where(dag_run.c.dag_id == dag_id)
        .order_by(dag_run.c.run_after.desc().nulls_last(), dag_run.c.id.desc())
        .limit(limit)).all())


def pause_by_scheduler(conn: Connection, dag_id: str, *, at: datetime, action: str,
                       reason: str) -> bool:
    """Pause ``dag_id`` unless it is paused already; the pause is an audit log row whose owner
    is the scheduler and whose detail is ``reason``. True when this call paused it."""
    res = conn.execute(update(dag).where(dag.c.dag_id == dag_id, dag.c.is_paused.is_(False))
                       .values(is_paused=True))
    if not res.rowcount:
        return False
    audit.record(conn, at=at, username=SCHEDULER, action=action, method="", path="",
                 outcome="success", status_code=0, dag_id=dag_id, target=dag_id,
                 detail=reason)
    return True
