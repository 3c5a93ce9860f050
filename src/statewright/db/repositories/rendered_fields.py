"""The template fields each try rendered (``rendered_task_instance_fields``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select

from statewright.db.bulk import insert_many
from statewright.db.tables_templating import rendered_task_instance_fields as rtif


@dataclass(frozen=True)
class RenderedTry:
    """What one try of a task instance rendered."""

    task_instance_id: int
    try_number: int
    dag_id: str
    run_id: str
    task_id: str
    rendered_fields: dict[str, Any]


def record(conn: Connection, tries: Sequence[RenderedTry], now: datetime) -> None:
    """Store what each try rendered, replacing what the same try stored before (a resumed
    deferral renders again): one upsert on the primary key (a delete and an insert cost twice
    as much in the pool's apply transaction, and nearly every try stores its row once)."""
    if tries:
        insert_many(conn, rtif, _COLUMNS, [
            (t.task_instance_id, t.try_number, t.dag_id, t.run_id, t.task_id,
             t.rendered_fields) for t in tries],
            {"created_at": now}, update_on=("task_instance_id", "try_number"))


_COLUMNS = ("task_instance_id", "try_number", "dag_id", "run_id", "task_id", "rendered_fields")


def for_task_instance(conn: Connection, task_instance_id: int) -> list[RenderedTry]:
    """Every try's rendered fields of one task instance, by try number."""
    rows = conn.execute(select(rtif).where(rtif.c.task_instance_id == task_instance_id)
                        .order_by(rtif.c.try_number)).all()
    return [RenderedTry(r.task_instance_id, r.try_number, r.dag_id, r.run_id, r.task_id,
                        dict(r.rendered_fields)) for r in rows]
