"""Task results (``xcom``), stored as JSON, keyed by (dag run, task, map index, key)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, delete, insert, select, tuple_

from statewright.db.bulk import chunks
from statewright.db.tables import xcom

# Written and read with every finished and every started try: built once, run with parameters.
_INSERT_XCOM = insert(xcom)
RETURN_KEY = "return_value"
ROW_VALUES_PER_STATEMENT = 1000
"""At most this many ``(run, task)`` row values in one ``IN`` list: PostgreSQL's parser runs
out of stack ("stack depth limit exceeded") near 10,000 (a task below 10,000 upstreams)."""


@functools.cache
def _delete_returns() -> Any:
    return delete(xcom).where(
        tuple_(xcom.c.dag_run_id, xcom.c.task_id, xcom.c.map_index).in_(
            bindparam("triples", expanding=True)),
        xcom.c.key == RETURN_KEY)


def set_return_values(conn: Connection, rows: Sequence[tuple[int, str, int, Any]],
                      now: datetime) -> None:
    """(dag_run_id, task_id, map_index, value) → replace the ``return_value`` of each task
    instance."""
    if not rows:
        return
    conn.execute(_delete_returns(), {"triples": [(r, t, m) for r, t, m, _ in rows]})
    conn.execute(
        _INSERT_XCOM,
        [{"dag_run_id": r, "task_id": t, "map_index": m, "key": RETURN_KEY, "value": v,
          "created_at": now} for r, t, m, v in rows],
    )


@functools.cache
def _delete_keys() -> Any:
    return delete(xcom).where(
        tuple_(xcom.c.dag_run_id, xcom.c.task_id, xcom.c.map_index, xcom.c.key).in_(
            bindparam("quads", expanding=True)))


def set_values(conn: Connection, rows: Sequence[tuple[int, str, int, str, Any]],
               now: datetime) -> None:
    """(dag_run_id, task_id, map_index, key, value) → replace each task instance's value under
    that key (what a try pushed with ``ti.xcom_push``)."""
    if not rows:
        return
    conn.execute(_delete_keys(), {"quads": [(r, t, m, k) for r, t, m, k, _ in rows]})
    conn.execute(_INSERT_XCOM, [{"dag_run_id": r, "task_id": t, "map_index": m, "key": k,
                                 "value": v, "created_at": now} for r, t, m, k, v in rows])


@functools.cache
def _delete_instances() -> Any:
    return delete(xcom).where(
        tuple_(xcom.c.dag_run_id, xcom.c.task_id, xcom.c.map_index).in_(
            bindparam("triples", expanding=True)))


@functools.cache
def _get_instances() -> Any:
    return select(xcom.c.dag_run_id, xcom.c.task_id, xcom.c.map_index, xcom.c.key,
                  xcom.c.value).where(
        tuple_(xcom.c.dag_run_id, xcom.c.task_id, xcom.c.map_index).in_(
            bindparam("triples", expanding=True)))


def values_of(conn: Connection, triples: Iterable[tuple[int, str, int]]) -> list[Any]:
    """Every stored row (dag_run_id, task_id, map_index, key, value) of these task instances."""
    out: list[Any] = []
    for part in chunks(list(set(triples)), ROW_VALUES_PER_STATEMENT):
        out.extend(conn.execute(_get_instances(), {"triples": part}).all())
    return out


def clear_tasks(conn: Connection, triples: Iterable[tuple[int, str, int]]) -> None:
    """Every value of these (dag_run_id, task_id, map_index): a new try starts without the
    last one's."""
    for part in chunks(list(set(triples)), ROW_VALUES_PER_STATEMENT):
        conn.execute(_delete_instances(), {"triples": part})


@functools.cache
def _get_all() -> Any:
    return select(xcom.c.dag_run_id, xcom.c.task_id, xcom.c.map_index, xcom.c.key,
                  xcom.c.value).where(
        tuple_(xcom.c.dag_run_id, xcom.c.task_id).in_(bindparam("pairs", expanding=True))
    ).order_by(xcom.c.map_index)


def get_values(conn: Connection, pairs: Iterable[tuple[int, str]]
               ) -> dict[tuple[int, str], dict[int, dict[str, Any]]]:
    """(dag_run_id, task_id) → map index → every key it stored → value (its return value
    under ``return_value``); map indexes in ascending order."""
    out: dict[tuple[int, str], dict[int, dict[str, Any]]] = {}
    for part in chunks(list(set(pairs)), ROW_VALUES_PER_STATEMENT):
        for r in conn.execute(_get_all(), {"pairs": part}).all():
            out.setdefault((r.dag_run_id, r.task_id), {}).setdefault(r.map_index, {})[r.key] = \
                r.value
    return out


def get_return_values(
    conn: Connection, pairs: Iterable[tuple[int, str]]
) -> dict[tuple[int, str], Any]:
    """(dag_run_id, task_id) → return value of the unmapped task instance (map index -1)."""
    return {pair: by_index[-1] for pair, by_index in get_indexed_return_values(conn, pairs).items()
            if -1 in by_index}


def get_indexed_return_values(
    conn: Connection, pairs: Iterable[tuple[int, str]]
) -> dict[tuple[int, str], dict[int, Any]]:
    """(dag_run_id, task_id) → map index → return value, map indexes ascending."""
    out: dict[tuple[int, str], dict[int, Any]] = {}
    for pair, by_index in get_values(conn, pairs).items():
        returns = {m: keys[RETURN_KEY] for m, keys in by_index.items() if RETURN_KEY in keys}
        if returns:
            out[pair] = returns
    return out


def clear_for(conn: Connection, dag_run_id: int, task_ids: Iterable[str],
              map_indexes: Iterable[int] | None = None) -> None:
    """The values of these tasks of a run (of the given map indexes only, when given)."""
    stmt = delete(xcom).where(xcom.c.dag_run_id == dag_run_id,
                              xcom.c.task_id.in_(list(task_ids)))
    if map_indexes is not None:
        stmt = stmt.where(xcom.c.map_index.in_(list(map_indexes)))
    conn.execute(stmt)


def entries(conn: Connection, dag_run_id: int, task_id: str, map_index: int = -1) -> list[Any]:
    """Every value a task instance stored, its return value first, then by key."""
    return list(conn.execute(
        select(xcom.c.key, xcom.c.value, xcom.c.created_at)
        .where(xcom.c.dag_run_id == dag_run_id, xcom.c.task_id == task_id,
               xcom.c.map_index == map_index)
        .order_by((xcom.c.key != RETURN_KEY), xcom.c.key)
    ).all())


def delete_key(conn: Connection, dag_run_id: int, task_id: str, map_index: int, key: str
               ) -> bool:
    """Delete the task instance's value under ``key``; False when it had none."""
    done = conn.execute(delete(xcom).where(
        xcom.c.dag_run_id == dag_run_id, xcom.c.task_id == task_id,
        xcom.c.map_index == map_index, xcom.c.key == key))
    return bool(done.rowcount)
