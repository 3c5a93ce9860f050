"""Queries on the ``dag`` table (serialized DAG structure and schedule fields)."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, literal_column, select, text, update

from statewright.db.tables import dag


def dag_hash(serialized: Mapping[str, Any]) -> str:
    try:
        text = json.dumps(serialized, sort_keys=True, default=str)
    except TypeError:  # keys of mixed types (a param's values_display {None: ..., 1: ...})
        text = json.dumps(json.loads(json.dumps(serialized, default=str)), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def upsert_dag(
    conn: Connection,
    serialized: Mapping[str, Any],
    *,
    now: datetime,
    paused_at_creation: bool = False,
    timetable: Mapping[str, Any] | None = None,
    schedule_summary: str | None = None,
) -> bool:
    """Insert or update a DAG's serialized structure; returns True when it changed."""
    h = dag_hash(serialized)
    row = conn.execute(select(dag.c.dag_hash, dag.c.is_active).where(
        dag.c.dag_id == serialized["dag_id"])).first()
    values = {
        "fileloc": serialized.get("fileloc"),
        "description": serialized.get("description"),
        "serialized": dict(serialized),
        "dag_hash": h,
        "max_active_runs": int(serialized.get("max_active_runs", 16)),
        "max_active_tasks": int(serialized.get("max_active_tasks", 16)),
        "fail_stop": bool(serialized.get("fail_stop", False)),
        "tags": list(serialized.get("tags") or []),
        "timetable": dict(timetable) if timetable is not None else None,
        "schedule_summary": schedule_summary,
        "last_parsed_at": now,
        "is_active": True,
        "deadline": serialized.get("deadline") or None,
    }
    if row is None:
        paused = serialized.get("is_paused_upon_creation")
        conn.execute(dag.insert().values(
            dag_id=serialized["dag_id"],
            is_paused=paused_at_creation if paused is None else bool(paused),
            **values,
        ))
        return True
    if row.dag_hash == h and row.is_active:
        conn.execute(update(dag).where(dag.c.dag_id == serialized["dag_id"])
                     .values(last_parsed_at=now))
        return False
    conn.execute(update(dag).where(dag.c.dag_id == serialized["dag_id"]).values(**values))
    return True


def get_serialized(conn: Connection, dag_id: str) -> dict[str, Any] | None:
    row = conn.execute(select(dag.c.serialized).where(dag.c.dag_id == dag_id)).first()
    return None if row is None else dict(row.serialized)


def get_serialized_many(
    conn: Connection, dag_ids: Iterable[str]
) -> dict[str, tuple[str, dict[str, Any]]]:
    """dag_id → (dag_hash, serialized)."""
    ids = list(set(dag_ids))
    if not ids:
        return {}
    rows = conn.execute(
        select(dag.c.dag_id, dag.c.dag_hash, dag.c.serialized).where(dag.c.dag_id.in_(ids))
    ).all()
    return {r.dag_id: (r.dag_hash, r.serialized) for r in rows}


@functools.cache
def _get_hashes(dialect: str) -> Any:
    # Read on every scheduler loop and every batch of tries: built once, run with parameters.
    # From the covering index (dag_id, dag_hash), never from the row: on SQLite the row holds
    # the serialized DAG before the hash (megabytes of overflow pages for a big DAG), and
    # SQLite's planner prefers the primary key's index (then the row) unless told.
    if dialect == "sqlite":
        return text(f"SELECT dag_id, dag_hash FROM dag INDEXED BY {_HASH_INDEX} "
                    "WHERE dag_id IN :ids").bindparams(bindparam("ids", expanding=True))
    return select(dag.c.dag_id, dag.c.dag_hash).where(
        dag.c.dag_id.in_(bindparam("ids", expanding=True)))


_HASH_INDEX = "ix_dag_dag_id_dag_hash"  # migration 0017


def hash_column(dialect: str, dag_id: Any) -> Any:
    """The hash of the DAG named by ``dag_id`` (a column of the outer query), as a scalar
    subquery on the covering index, as ``get_hashes`` reads it."""
    if dialect == "sqlite":
        return literal_column(f"(SELECT dag_hash FROM dag INDEXED BY {_HASH_INDEX} "
                              f"WHERE dag.dag_id = {dag_id.table.name}.{dag_id.name})")
    return select(dag.c.dag_hash).where(dag.c.dag_id == dag_id).scalar_subquery()


def get_hashes(conn: Connection, dag_ids: Iterable[str]) -> dict[str, str]:
    ids = list(set(dag_ids))
    if not ids:
        return {}
    rows = conn.execute(_get_hashes(conn.dialect.name), {"ids": ids}).all()
    return {r.dag_id: r.dag_hash for r in rows}


def get_dag(conn: Connection, dag_id: str) -> Any:
    return conn.execute(select(dag).where(dag.c.dag_id == dag_id)).first()


def list_dags(conn: Connection, *, only_active: bool = True) -> list[Any]:
    stmt = select(dag).order_by(dag.c.dag_id)
    if only_active:
        stmt = stmt.where(dag.c.is_active.is_(True))
    return list(conn.execute(stmt).all())


def set_paused(conn: Connection, dag_id: str, paused: bool) -> bool:
    res = conn.execute(update(dag).where(dag.c.dag_id == dag_id).values(is_paused=paused))
    return res.rowcount > 0


def deactivate_missing(
    conn: Connection, *, folder_prefix: str, present: Iterable[str]
) -> list[str]:
    """Mark inactive the DAGs defined under ``folder_prefix`` whose id is not in ``present``."""
    keep = set(present)
    rows = conn.execute(
        select(dag.c.dag_id).where(dag.c.is_active.is_(True), dag.c.kind != "flow",
                                   dag.c.fileloc.startswith(folder_prefix))
    ).all()
    gone = [r.dag_id for r in rows if r.dag_id not in keep]
    if gone:
        conn.execute(update(dag).where(dag.c.dag_id.in_(gone)).values(is_active=False))
    return gone


def set_next_dagrun(conn: Connection, dag_id: str, values: Mapping[str, Any]) -> None:
    conn.execute(update(dag).where(dag.c.dag_id == dag_id).values(**values))




# -- syncing from the DAG processor -----------------------------------------------------------


def sync_states(conn: Connection, dag_ids: Iterable[str]) -> dict[str, Any]:
    """dag_id → (dag_hash, is_active, fileloc, timetable) of the DAGs that exist."""
    ids = list(set(dag_ids))
    out: dict[str, Any] = {}
    for start in range(0, len(ids), 400):
        rows = conn.execute(
            select(dag.c.dag_id, dag.c.dag_hash, dag.c.is_active, dag.c.fileloc, dag.c.timetable)
            .where(dag.c.dag_id.in_(ids[start:start + 400]))
        ).all()
        out.update({r.dag_id: r for r in rows})
    return out


def active_by_file(conn: Connection, folder_prefix: str) -> dict[str, set[str]]:
    """fileloc → ids of the active DAGs defined in files below ``folder_prefix``."""
    out: dict[str, set[str]] = {}
    for dag_id, fileloc in conn.execute(
        select(dag.c.dag_id, dag.c.fileloc).where(
            dag.c.is_active.is_(True), dag.c.kind != "flow",
            dag.c.fileloc.startswith(folder_prefix, autoescape=True))
    ).all():
        out.setdefault(fileloc, set()).add(dag_id)
    return out


def insert_synced(conn: Connection, serialized: Mapping[str, Any], *, now: datetime,
                  paused: bool, values: Mapping[str, Any]) -> None:
    """A DAG seen for the first time (``values``: timetable, summary, next_dagrun*)."""
    conn.execute(dag.insert().values(
        dag_id=serialized["dag_id"], is_paused=paused, **_synced_values(serialized, now),
        **values))


def update_synced(conn: Connection, serialized: Mapping[str, Any], *, now: datetime,
                  values: Mapping[str, Any]) -> None:
    """A DAG whose structure or schedule changed, or that is active again."""
    conn.execute(update(dag).where(dag.c.dag_id == serialized["dag_id"])
                 .values(**_synced_values(serialized, now), **values))


def touch_parsed(conn: Connection, dag_ids: Iterable[str], now: datetime) -> None:
    ids = list(dag_ids)
    for start in range(0, len(ids), 400):
        conn.execute(update(dag).where(dag.c.dag_id.in_(ids[start:start + 400]))
                     .values(last_parsed_at=now))


def deactivate(conn: Connection, dag_ids: Iterable[str]) -> list[str]:
    ids = sorted(set(dag_ids))
    if ids:
        conn.execute(update(dag).where(dag.c.dag_id.in_(ids)).values(is_active=False))
    return ids


def _synced_values(serialized: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    return {
        "fileloc": serialized.get("fileloc"),
        "description": serialized.get("description"),
        "serialized": dict(serialized),
        "dag_hash": dag_hash(serialized),
        "max_active_runs": int(serialized.get("max_active_runs", 16)),
        "max_active_tasks": int(serialized.get("max_active_tasks", 16)),
        "fail_stop": bool(serialized.get("fail_stop", False)),
        "tags": list(serialized.get("tags") or []),
        "last_parsed_at": now,
        "is_active": True,
        "deadline": serialized.get("deadline") or None,
    }


def active_in_file(conn: Connection, fileloc: str) -> set[str]:
    return set(conn.execute(
        select(dag.c.dag_id).where(dag.c.is_active.is_(True), dag.c.kind != "flow",
                                   dag.c.fileloc == fileloc)
    ).scalars())


def lock(conn: Connection, dag_ids: Iterable[str]) -> None:
    """Serialize decisions that count per DAG (max_active_runs / max_active_tasks) between
    schedulers: on PostgreSQL, row locks on the DAGs in a fixed order; SQLite's BEGIN IMMEDIATE
    already serializes writers."""
    ids = sorted(set(dag_ids))
    if ids and conn.dialect.name == "postgresql":
        conn.execute(select(dag.c.dag_id).where(dag.c.dag_id.in_(ids))
                     .order_by(dag.c.dag_id).with_for_update())


def active_in_files(conn: Connection, filelocs: Iterable[str]) -> dict[str, set[str]]:
    """fileloc → ids of its active DAGs."""
    names = list(set(filelocs))
    out: dict[str, set[str]] = {}
    for start in range(0, len(names), 400):
        for dag_id, fileloc in conn.execute(
            select(dag.c.dag_id, dag.c.fileloc).where(
                dag.c.is_active.is_(True), dag.c.kind != "flow",
                dag.c.fileloc.in_(names[start:start + 400]))
        ).all():
            out.setdefault(fileloc, set()).add(dag_id)
    return out


def insert_synced_many(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """New DAGs: dicts of ``serialized``, ``paused``, ``now`` and ``values``."""
    if rows:
        conn.execute(dag.insert(), [
            {"dag_id": r["serialized"]["dag_id"], "is_paused": r["paused"],
             **_synced_values(r["serialized"], r["now"]), **r["values"]} for r in rows])
