"""Queries of the run controls (clear, mark, cancel, pause) and of stopped tries.

State columns are never written here: the controls move states through ``db.transition``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, exists, or_, select, tuple_

from statewright.core.states import TI, StateName
from statewright.db.tables import task_instance, task_reschedule, trigger

ti = task_instance.c


def delete_unreferenced_triggers(conn: Connection, trigger_ids: Iterable[int]) -> int:
    """Delete the given triggers once no task instance refers to them any more."""
    ids = sorted({t for t in trigger_ids if t is not None})
    if not ids:
        return 0
    referenced = exists().where(ti.trigger_id == trigger.c.id)
    res = conn.execute(delete(trigger).where(trigger.c.id.in_(ids), ~referenced))
    return int(res.rowcount or 0)


def delete_task_reschedules(conn: Connection, ti_ids: Sequence[int]) -> None:
    """A cleared sensor starts a new sensing period (Airflow deletes its TaskReschedule rows)."""
    if ti_ids:
        conn.execute(delete(task_reschedule).where(task_reschedule.c.task_instance_id.in_(
            list(ti_ids))))


def tries(conn: Connection, pairs: Sequence[tuple[int, int]]) -> list[Any]:
    """Task instance rows of the given (id, try_number) pairs, whatever their state."""
    if not pairs:
        return []
    return list(conn.execute(
        select(task_instance).where(tuple_(ti.id, ti.try_number).in_(list(pairs)))
    ).all())


def abandoned_stopping_tries(conn: Connection, older_than: datetime) -> list[Any]:
    """Task instances whose try is being stopped (cleared while running: ``restarting``;
    cancelled: ``shutdown`` named Cancelling) and whose worker has not settled them since
    ``older_than`` (heartbeats stop when a try leaves ``running``)."""
    return list(conn.execute(
        select(task_instance).where(
            or_(ti.state == TI.RESTARTING.value,
                (ti.state == TI.SHUTDOWN.value) & (ti.state_name == StateName.CANCELLING.value)),
            or_(ti.last_heartbeat_at.is_(None), ti.last_heartbeat_at < older_than),
        )
    ).all())
