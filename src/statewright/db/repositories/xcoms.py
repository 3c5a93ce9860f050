"""Task results (``xcom``), stored as JSON."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, delete, insert, select, tuple_

from statewright.db.tables import xcom

# Written and read with every finished and every started try: built once, run with parameters.
_INSERT_XCOM = insert(xcom)


@functools.cache
def _delete_returns() -> Any:
    return delete(xcom).where(
        tuple_(xcom.c.dag_run_id, xcom.c.task_id).in_(bindparam("pairs", expanding=True)),
        xcom.c.key == "return_value")


@functools.cache
def _get_returns() -> Any:
    return select(xcom.c.dag_run_id, xcom.c.task_id, xcom.c.value).where(
        tuple_(xcom.c.dag_run_id, xcom.c.task_id).in_(bindparam("pairs", expanding=True)),
        xcom.c.key == "return_value")


def set_return_values(conn: Connection, rows: Sequence[tuple[int, str, Any]],
                      now: datetime) -> None:
    """(dag_run_id, task_id, value) → replace the ``return_value`` of each task."""
    if not rows:
        return
    conn.execute(_delete_returns(), {"pairs": [(r, t) for r, t, _ in rows]})
    conn.execute(
        _INSERT_XCOM,
        [{"dag_run_id": r, "task_id": t, "key": "return_value", "value": v, "created_at": now}
         for r, t, v in rows],
    )


@functools.cache
def _delete_keys() -> Any:
    return delete(xcom).where(
        tuple_(xcom.c.dag_run_id, xcom.c.task_id, xcom.c.key).in_(
            bindparam("triples", expanding=True)))


def set_values(conn: Connection, rows: Sequence[tuple[int, str, str, Any]],
               now: datetime) -> None:
    """(dag_run_id, task_id, key, value) → replace each task's value under that key (what a try
    pushed with ``ti.xcom_push``)."""
    if not rows:
        return
    conn.execute(_delete_keys(), {"triples": [(r, t, k) for r, t, k, _ in rows]})
    conn.execute(_INSERT_XCOM, [{"dag_run_id": r, "task_id": t, "key": k, "value": v,
                                 "created_at": now} for r, t, k, v in rows])


@functools.cache
def _delete_tasks() -> Any:
    return delete(xcom).where(
        tuple_(xcom.c.dag_run_id, xcom.c.task_id).in_(bindparam("pairs", expanding=True)))


def clear_tasks(conn: Connection, pairs: Iterable[tuple[int, str]]) -> None:
    """Every value of these (dag_run_id, task_id): a new try starts without the last one's."""
    wanted = list(set(pairs))
    if wanted:
        conn.execute(_delete_tasks(), {"pairs": wanted})


@functools.cache
def _get_all() -> Any:
    return select(xcom.c.dag_run_id, xcom.c.task_id, xcom.c.key, xcom.c.value).where(
        tuple_(xcom.c.dag_run_id, xcom.c.task_id).in_(bindparam("pairs", expanding=True)))


def get_values(conn: Connection, pairs: Iterable[tuple[int, str]]
               ) -> dict[tuple[int, str], dict[str, Any]]:
    """(dag_run_id, task_id) → every key it stored → value (its return value under
    ``return_value``)."""
    wanted = list(set(pairs))
    if not wanted:
        return {}
    out: dict[tuple[int, str], dict[str, Any]] = {}
    for r in conn.execute(_get_all(), {"pairs": wanted}).all():
        out.setdefault((r.dag_run_id, r.task_id), {})[r.key] = r.value
    return out


def get_return_values(
    conn: Connection, pairs: Iterable[tuple[int, str]]
) -> dict[tuple[int, str], Any]:
    pairs = list(set(pairs))
    if not pairs:
        return {}
    rows = conn.execute(_get_returns(), {"pairs": pairs}).all()
    return {(r.dag_run_id, r.task_id): r.value for r in rows}


def clear_for(conn: Connection, dag_run_id: int, task_ids: Iterable[str]) -> None:
    conn.execute(delete(xcom).where(xcom.c.dag_run_id == dag_run_id,
                                    xcom.c.task_id.in_(list(task_ids))))


def entries(conn: Connection, dag_run_id: int, task_id: str) -> list[Any]:
    """Every value a task instance stored, its return value first, then by key."""
    return list(conn.execute(
        select(xcom.c.key, xcom.c.value, xcom.c.created_at)
        .where(xcom.c.dag_run_id == dag_run_id, xcom.c.task_id == task_id)
        .order_by((xcom.c.key != "return_value"), xcom.c.key)
    ).all())
