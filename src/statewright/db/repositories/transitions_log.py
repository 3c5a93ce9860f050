"""Reads of the append-only ``state_transition`` history."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select

from statewright.db.tables import state_transition as st


def for_task_instance(conn: Connection, ti_id: int) -> list[Any]:
    return list(conn.execute(
        select(st).where(st.c.entity == "task_instance", st.c.entity_id == ti_id).order_by(st.c.id)
    ).all())


def for_run(conn: Connection, dag_id: str, run_id: str) -> list[Any]:
    return list(conn.execute(
        select(st).where(st.c.dag_id == dag_id, st.c.run_id == run_id).order_by(st.c.id)
    ).all())
