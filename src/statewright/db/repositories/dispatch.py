"""Queries of an executor that hands queued task instances to remote workers (Celery)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, func, select

from statewright.core.states import TI
from statewright.db.tables import task_instance

ti = task_instance.c


def in_flight(conn: Connection, executor: str) -> int:
    """Task instances queued to, or running on, ``executor`` (its identity)."""
    return int(conn.execute(
        select(func.count()).select_from(task_instance).where(
            ti.state.in_([TI.QUEUED.value, TI.RUNNING.value]), ti.executor == executor)
    ).scalar_one())


def to_send(conn: Connection, ids: Sequence[int]) -> list[Any]:
    """What a message for each still-queued task instance carries: id, try number, queue."""
    if not ids:
        return []
    return list(conn.execute(
        select(ti.id, ti.try_number, ti.queue, ti.dag_id, ti.run_id, ti.task_id)
        .where(ti.id.in_(list(ids)), ti.state == TI.QUEUED.value)
        .order_by(ti.priority_weight.desc(), ti.id)
    ).all())
