"""The template fields each try rendered (``rendered_task_instance_fields``)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, delete, insert, select, tuple_

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
    deferral renders again)."""
    if not tries:
        return
    keys = [(t.task_instance_id, t.try_number) for t in tries]
    conn.execute(_delete_tries(), {"keys": keys})
    conn.execute(_insert(), [
        {"task_instance_id": t.task_instance_id, "try_number": t.try_number, "dag_id": t.dag_id,
         "run_id": t.run_id, "task_id": t.task_id, "rendered_fields": t.rendered_fields,
         "created_at": now} for t in tries])


@functools.cache
def _delete_tries() -> Any:
    """Built once (an apply transaction runs it while it holds SQLite's write lock)."""
    return delete(rtif).where(tuple_(rtif.c.task_instance_id, rtif.c.try_number).in_(
        bindparam("keys", expanding=True)))


@functools.cache
def _insert() -> Any:
    return insert(rtif)


def for_task_instance(conn: Connection, task_instance_id: int) -> list[RenderedTry]:
    """Every try's rendered fields of one task instance, by try number."""
    rows = conn.execute(select(rtif).where(rtif.c.task_instance_id == task_instance_id)
                        .order_by(rtif.c.try_number)).all()
    return [RenderedTry(r.task_instance_id, r.try_number, r.dag_id, r.run_id, r.task_id,
                        dict(r.rendered_fields)) for r in rows]
