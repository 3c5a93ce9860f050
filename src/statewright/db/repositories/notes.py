"""Notes on DAG runs and task instances: each note written is a row (who, when, the text; NULL
text: cleared), the newest row of a run or task instance is its note, the others its history."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, func, insert, select

from statewright.db.tables_notes import note

n = note.c
MAX_CHARS = 1000
"""Airflow's limit on a note's length."""

TiKey = tuple[int, str, int]
"""A task instance's note key: (the run's row id, task id, map index)."""


def write(conn: Connection, dag_run_id: int, content: str | None, username: str | None,
          at: datetime, *, task_id: str | None = None, map_indexes: Sequence[int] = ()) -> None:
    """Write the note of a run (no ``task_id``) or of task instances (one row per map index);
    an empty text clears the note."""
    text = content or None
    rows = [dict(dag_run_id=dag_run_id, task_id=None, map_index=None, content=text,
                 username=username, created_at=at)] if task_id is None else [
        dict(dag_run_id=dag_run_id, task_id=task_id, map_index=i, content=text,
             username=username, created_at=at) for i in map_indexes]
    if rows:
        conn.execute(insert(note), rows)


def _newest(conn: Connection, run_ids: Sequence[int], of_runs: bool) -> list[Any]:
    if not run_ids:
        return []
    kind = n.task_id.is_(None) if of_runs else n.task_id.is_not(None)
    newest = (select(func.max(n.id).label("id"))
              .where(n.dag_run_id.in_(list(set(run_ids))), kind)
              .group_by(n.dag_run_id, n.task_id, n.map_index).subquery())
    return list(conn.execute(select(note).join(newest, and_(newest.c.id == n.id))).all())


def of_runs(conn: Connection, run_ids: Sequence[int]) -> dict[int, str | None]:
    """The note of each of the runs (by row id) that has one, in one query."""
    return {r.dag_run_id: r.content for r in _newest(conn, run_ids, True)}


def of_task_instances(conn: Connection, run_ids: Sequence[int]) -> dict[TiKey, str | None]:
    """The note of each task instance of the runs that has one, in one query."""
    return {(r.dag_run_id, r.task_id, r.map_index): r.content
            for r in _newest(conn, run_ids, False)}


def history(conn: Connection, dag_run_id: int, task_id: str | None = None,
            map_index: int | None = None) -> list[Any]:
    """Every note written on the run (no ``task_id``) or task instance, oldest first."""
    where = [n.dag_run_id == dag_run_id]
    where += [n.task_id.is_(None)] if task_id is None else [n.task_id == task_id,
                                                            n.map_index == map_index]
    return list(conn.execute(select(note).where(*where).order_by(n.id)).all())
