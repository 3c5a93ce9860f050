"""Queries on ``dag_version``: writing a DAG's versions, pointing runs and tries at them."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    and_,
    bindparam,
    delete,
    exists,
    func,
    select,
    update,
)

from statewright.core.versions import VersionKey
from statewright.db.bulk import chunks
from statewright.db.tables import dag_run, task_instance, task_instance_history
from statewright.db.tables_versions import dag_version

_LIGHT = (dag_version.c.id, dag_version.c.dag_id, dag_version.c.version_number,
          dag_version.c.structure_hash, dag_version.c.code_hash, dag_version.c.fileloc,
          dag_version.c.created_at)


def latest_keys(conn: Connection, dag_ids: Iterable[str]) -> dict[str, tuple[int, VersionKey]]:
    """dag_id → (number, key) of its latest version, for the DAGs that have one."""
    out: dict[str, tuple[int, VersionKey]] = {}
    for chunk in chunks(sorted(set(dag_ids)), 400):
        newest = (select(dag_version.c.dag_id, func.max(dag_version.c.version_number).label("n"))
                  .where(dag_version.c.dag_id.in_(chunk)).group_by(dag_version.c.dag_id)
                  .subquery())
        rows = conn.execute(
            select(dag_version.c.dag_id, dag_version.c.version_number,
                   dag_version.c.structure_hash, dag_version.c.code_hash)
            .join(newest, and_(newest.c.dag_id == dag_version.c.dag_id,
                               newest.c.n == dag_version.c.version_number))
        ).all()
        out.update({r.dag_id: (r.version_number, VersionKey(r.structure_hash, r.code_hash))
                    for r in rows})
    return out


def insert_many(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """New versions: dicts of dag_id, version_number, structure_hash, code_hash, serialized,
    source_code, fileloc, created_at."""
    if rows:
        conn.execute(dag_version.insert(), [dict(r) for r in rows])


def latest_id(dag_id: ColumnElement[Any]) -> Any:
    """A scalar subquery: the id of the latest version of the DAG ``dag_id`` (a column)."""
    return (select(func.max(dag_version.c.id)).where(dag_version.c.dag_id == dag_id)
            .scalar_subquery())


def stamp_runs(conn: Connection, run_pks: Sequence[int]) -> None:
    """Point new runs, and their task instances that point nowhere yet, at their DAG's latest
    version (the version they are created with)."""
    for chunk in chunks(list(run_pks), 500):
        conn.execute(update(dag_run).where(dag_run.c.id.in_(chunk))
                     .values(dag_version_id=latest_id(dag_run.c.dag_id)))
        stamp_task_instances(conn, chunk)


def stamp_task_instances(conn: Connection, run_pks: Sequence[int]) -> None:
    """Task instances of these runs without a version get their DAG's latest."""
    ti = task_instance.c
    for chunk in chunks(list(run_pks), 500):
        conn.execute(update(task_instance)
                     .where(ti.dag_run_id.in_(chunk), ti.dag_version_id.is_(None))
                     .values(dag_version_id=latest_id(ti.dag_id)))


def versions_of_tries(conn: Connection, ti_ids: Iterable[int]) -> dict[int, int | None]:
    """task instance id → the version its current try runs (for its history row)."""
    out: dict[int, int | None] = {}
    for chunk in chunks(sorted(set(ti_ids)), 500):
        out.update({pk: v for pk, v in conn.execute(_versions_of_tries(), {"ids": chunk})})
    return out


@functools.cache
def _versions_of_tries() -> Any:
    # Built once: it runs in every batch of finished tries.
    return (select(task_instance.c.id, task_instance.c.dag_version_id)
            .where(task_instance.c.id.in_(bindparam("ids", expanding=True))))


def list_versions(conn: Connection, dag_id: str) -> list[Any]:
    """A DAG's versions, oldest first, without their serialized DAG and source code."""
    return list(conn.execute(select(*_LIGHT).where(dag_version.c.dag_id == dag_id)
                             .order_by(dag_version.c.version_number)).all())


def get_version(conn: Connection, dag_id: str, number: int | None = None) -> Any:
    """One version of a DAG with its serialized DAG and source (None: the latest)."""
    stmt = select(dag_version).where(dag_version.c.dag_id == dag_id)
    if number is None:
        stmt = stmt.order_by(dag_version.c.version_number.desc()).limit(1)
    else:
        stmt = stmt.where(dag_version.c.version_number == number)
    return conn.execute(stmt).first()


def get_by_id(conn: Connection, version_id: int) -> Any:
    return conn.execute(select(dag_version).where(dag_version.c.id == version_id)).first()


def numbers(conn: Connection, version_ids: Iterable[int | None]) -> dict[int, int]:
    """version id → version number."""
    ids = sorted({v for v in version_ids if v is not None})
    out: dict[int, int] = {}
    for chunk in chunks(ids, 500):
        out.update({pk: n for pk, n in conn.execute(
            select(dag_version.c.id, dag_version.c.version_number)
            .where(dag_version.c.id.in_(chunk))).all()})
    return out


def prune_unused(conn: Connection, dag_ids: Iterable[str] | None = None) -> int:
    """Delete the versions no run, task instance or try points to, except each DAG's latest;
    returns how many went."""
    v = dag_version.c
    newest = select(func.max(dag_version.c.id)).group_by(dag_version.c.dag_id)
    stmt = delete(dag_version).where(
        v.id.not_in(newest),
        ~exists().where(dag_run.c.dag_version_id == v.id),
        ~exists().where(task_instance.c.dag_version_id == v.id),
        ~exists().where(task_instance_history.c.dag_version_id == v.id),
    )
    if dag_ids is not None:
        stmt = stmt.where(v.dag_id.in_(sorted(set(dag_ids))))
    return int(conn.execute(stmt).rowcount or 0)


def count(conn: Connection, dag_id: str) -> int:
    return int(conn.execute(select(func.count()).select_from(dag_version)
                            .where(dag_version.c.dag_id == dag_id)).scalar_one())


