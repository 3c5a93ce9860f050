"""Task state and asset state: one row per key, the value as JSON text.

Writes of task state are fenced by the try number (:func:`write`): the task instance's row is
read (locked on PostgreSQL) and the write is applied only if that try is the one running.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, delete, or_, select, tuple_
from sqlalchemy.dialects import postgresql, sqlite

from statewright.core.task_state import Retention, decode_value, refusal, visible
from statewright.db.tables import task_instance
from statewright.db.tables_task_state import asset_state, task_state

__all__ = [
    "StateRow",
    "TaskKey",
    "asset_keys",
    "asset_write",
    "clear",
    "expire_run_retention",
    "fence",
    "keys_of",
    "read",
    "running_try",
    "write",
]


@dataclass(frozen=True)
class TaskKey:
    """The task instance whose state it is (``map_index`` -1: not mapped)."""

    dag_id: str
    run_id: str
    task_id: str
    map_index: int = -1


@dataclass(frozen=True)
class StateRow:
    key: str
    value: Any
    updated_at: datetime
    retention: str | None = None
    try_number: int | None = None
    map_index: int | None = None
    task_id: str | None = None
    """For asset state: who wrote it last (``dag_id/run_id/task_id``)."""
    written_by: str | None = None
    asset_name: str | None = None


def _ti_where(ti: TaskKey) -> Any:
    c = task_state.c
    return and_(c.dag_id == ti.dag_id, c.run_id == ti.run_id, c.task_id == ti.task_id,
                c.map_index == ti.map_index)


def read(conn: Connection, ti: TaskKey, key: str, *, reader_try: int | None) -> StateRow | None:
    """The value of ``key`` as the reader (try ``reader_try``) sees it, or None."""
    c = task_state.c
    row = conn.execute(select(task_state).where(_ti_where(ti), c.key == key)).first()
    if row is None or not visible(row.retention, row.try_number, reader_try):
        return None
    return _task_row(row)


def keys_of(conn: Connection, dag_id: str, run_id: str, task_id: str, *,
            map_index: int | None = None) -> list[StateRow]:
    """Every live key of a task (all its map indexes unless ``map_index`` is given): values
    kept "for the try" show only while their try is the task instance's latest."""
    c = task_state.c
    query = (select(task_state)
             .where(c.dag_id == dag_id, c.run_id == run_id, c.task_id == task_id)
             .order_by(c.map_index, c.key))
    if map_index is not None:
        query = query.where(c.map_index == map_index)
    t = task_instance.c
    tries = dict(conn.execute(select(t.map_index, t.try_number).where(
        t.dag_id == dag_id, t.run_id == run_id, t.task_id == task_id)).all())
    return [_task_row(r) for r in conn.execute(query).all()
            if visible(r.retention, r.try_number, tries.get(r.map_index, r.try_number))]


def _task_row(row: Any) -> StateRow:
    return StateRow(key=row.key, value=decode_value(row.value), updated_at=row.updated_at,
                    retention=row.retention, try_number=row.try_number,
                    map_index=row.map_index, task_id=row.task_id)


def running_try(conn: Connection, ti: TaskKey) -> tuple[int | None, str | None, int | None]:
    """``(try_number, state, id)`` of the task instance (locked on PostgreSQL), or Nones."""
    c = task_instance.c
    query = select(c.id, c.try_number, c.state).where(
        c.dag_id == ti.dag_id, c.run_id == ti.run_id, c.task_id == ti.task_id,
        c.map_index == ti.map_index)
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = conn.execute(query).first()
    return (None, None, None) if row is None else (row.try_number, row.state, row.id)


def fence(conn: Connection, ti: TaskKey, writer_try: int) -> tuple[str | None, int | None]:
    """``(why the write is refused or None, the task instance's id)``."""
    current_try, state, ti_id = running_try(conn, ti)
    return refusal(writer_try, current_try, state), ti_id


def write(conn: Connection, ti: TaskKey, key: str, text: str | None, *, retention: Retention,
          writer_try: int, now: datetime) -> None:
    """Store ``text`` (JSON) under ``key``, or delete the key (``text`` None). The caller has
    checked the fence (:func:`fence`) in the same transaction."""
    c = task_state.c
    # values of earlier tries kept "for the try" have expired: drop them
    conn.execute(delete(task_state).where(
        _ti_where(ti), c.retention == Retention.TRY.value, c.try_number != writer_try))
    if text is None:
        conn.execute(delete(task_state).where(_ti_where(ti), c.key == key))
        return
    values = dict(dag_id=ti.dag_id, run_id=ti.run_id, task_id=ti.task_id,
                  map_index=ti.map_index, key=key, value=text, retention=retention.value,
                  try_number=writer_try, updated_at=now)
    _upsert(conn, task_state, ["dag_id", "run_id", "task_id", "map_index", "key"], values)


def _upsert(conn: Connection, table: Any, unique: list[str], values: dict[str, Any]) -> None:
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    stmt = dialect.insert(table).values(**values)
    changed = {k: v for k, v in values.items() if k not in unique}
    conn.execute(stmt.on_conflict_do_update(index_elements=unique, set_=changed))


def clear(conn: Connection, dag_id: str, run_id: str, task_ids: Iterable[str] | None = None,
          *, map_indexes: Iterable[tuple[str, int]] | None = None) -> int:
    """Delete the state of tasks of a run (all of them when ``task_ids`` is None)."""
    c = task_state.c
    query = delete(task_state).where(c.dag_id == dag_id, c.run_id == run_id)
    if map_indexes is not None:
        query = query.where(tuple_(c.task_id, c.map_index).in_(list(map_indexes)))
    elif task_ids is not None:
        query = query.where(c.task_id.in_(list(task_ids)))
    return int(conn.execute(query).rowcount or 0)


def expire_run_retention(conn: Connection, runs: Iterable[tuple[str, str]]) -> int:
    """Drop the values kept "for the run" (and "for the try") of runs that start over."""
    pairs = list(runs)
    if not pairs:
        return 0
    c = task_state.c
    in_runs = or_(*(and_(c.dag_id == d, c.run_id == r) for d, r in pairs))
    return int(conn.execute(delete(task_state).where(
        in_runs, c.retention != Retention.NEVER_EXPIRE.value)).rowcount or 0)


# -- asset state -------------------------------------------------------------------------------


def asset_keys(conn: Connection, asset_name: str | None, key: str | None = None
               ) -> list[StateRow]:
    """The keys of one asset's state (of every asset's when ``asset_name`` is None)."""
    c = asset_state.c
    query = select(asset_state).order_by(c.asset_name, c.key)
    if asset_name is not None:
        query = query.where(c.asset_name == asset_name)
    if key is not None:
        query = query.where(c.key == key)
    return [StateRow(key=r.key, value=decode_value(r.value), updated_at=r.updated_at,
                     try_number=r.try_number, task_id=r.task_id, asset_name=r.asset_name,
                     written_by=f"{r.dag_id}/{r.run_id}/{r.task_id}" if r.dag_id else None)
            for r in conn.execute(query).all()]


def asset_write(conn: Connection, asset_name: str, key: str, text: str | None, *,
                writer: TaskKey | None, writer_try: int | None, now: datetime) -> None:
    """Store (or delete, ``text`` None) an asset's key; the caller has checked the fence."""
    c = asset_state.c
    if text is None:
        conn.execute(delete(asset_state).where(c.asset_name == asset_name, c.key == key))
        return
    values = dict(asset_name=asset_name, key=key, value=text, updated_at=now,
                  dag_id=writer.dag_id if writer else None,
                  run_id=writer.run_id if writer else None,
                  task_id=writer.task_id if writer else None, try_number=writer_try)
    _upsert(conn, asset_state, ["asset_name", "key"], values)
