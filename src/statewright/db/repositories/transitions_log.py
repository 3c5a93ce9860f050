"""Reads of the append-only ``state_transition`` history."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, func, select

from statewright.db.tables import state_transition as st


def for_task_instance(conn: Connection, ti_id: int) -> list[Any]:
    return list(conn.execute(
        select(st).where(st.c.entity == "task_instance", st.c.entity_id == ti_id).order_by(st.c.id)
    ).all())


def for_run(conn: Connection, dag_id: str, run_id: str) -> list[Any]:
    return list(conn.execute(
        select(st).where(st.c.dag_id == dag_id, st.c.run_id == run_id).order_by(st.c.id)
    ).all())


def latest_id(conn: Connection) -> int:
    """The id of the newest history row (0 when there is none): where a live stream starts."""
    return int(conn.execute(select(func.max(st.c.id))).scalar() or 0)


def since(conn: Connection, after_id: int, *, dag_id: str | None = None,
          run_id: str | None = None, limit: int = 500) -> list[Any]:
    """History rows with an id above ``after_id`` (of one DAG / run when given), oldest first."""
    query = select(st).where(st.c.id > after_id)
    if dag_id is not None:
        query = query.where(st.c.dag_id == dag_id)
    if run_id is not None:
        query = query.where(st.c.run_id == run_id)
    return list(conn.execute(query.order_by(st.c.id).limit(limit)).all())
