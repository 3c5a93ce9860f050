"""``task_reschedule`` rows and the reschedule fields of ``task_instance``.

A sensor in reschedule mode ends each poke session with one ``task_reschedule`` row; the
task instance keeps ``reschedule_date``, ``first_poke_at`` and ``poke_count`` for its try.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, bindparam, insert, select, update

from statewright.core.states import TI
from statewright.db.tables import task_instance, task_reschedule

ti = task_instance.c


def set_reschedule_fields(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Before a running try moves to up_for_reschedule: ``reschedule_date``,
    ``first_poke_at`` and ``poke_count`` of each ``{id, try_number, …}`` (only while that try is
    still running; the state itself changes through the door)."""
    if not rows:
        return
    conn.execute(
        update(task_instance)
        .where(ti.id == bindparam("b_id"), ti.try_number == bindparam("b_try"),
               ti.state == TI.RUNNING.value)
        .values(reschedule_date=bindparam("b_date"), first_poke_at=bindparam("b_first"),
                poke_count=bindparam("b_count")),
        [{"b_id": r["id"], "b_try": r["try_number"], "b_date": r["reschedule_date"],
          "b_first": r["first_poke_at"], "b_count": r["poke_count"]} for r in rows],
    )


def add(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        conn.execute(insert(task_reschedule), list(rows))


def for_task_instance(conn: Connection, ti_id: int) -> list[Any]:
    return list(conn.execute(
        select(task_reschedule).where(task_reschedule.c.task_instance_id == ti_id)
        .order_by(task_reschedule.c.id)
    ).all())
