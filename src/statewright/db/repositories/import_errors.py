"""Import errors of DAG files, one row per file."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, select, update

from statewright.db.tables import import_error


def record(conn: Connection, filename: str, stacktrace: str, now: datetime) -> None:
    res = conn.execute(update(import_error).where(import_error.c.filename == filename)
                       .values(stacktrace=stacktrace, timestamp=now))
    if res.rowcount == 0:
        conn.execute(import_error.insert().values(filename=filename, stacktrace=stacktrace,
                                                  timestamp=now))


def clear(conn: Connection, filenames: Iterable[str]) -> None:
    names = list(filenames)
    if names:
        conn.execute(delete(import_error).where(import_error.c.filename.in_(names)))


def list_all(conn: Connection) -> list[Any]:
    return list(conn.execute(select(import_error).order_by(import_error.c.filename)).all())


def filenames_under(conn: Connection, folder_prefix: str) -> list[str]:
    return list(conn.execute(
        select(import_error.c.filename)
        .where(import_error.c.filename.startswith(folder_prefix, autoescape=True))
    ).scalars())


def naming_dag(conn: Connection, dag_id: str) -> Any:
    """The import error that names DAG ``dag_id`` (one refused while its file loaded), if any."""
    return conn.execute(
        select(import_error).where(import_error.c.stacktrace.contains(f"DAG {dag_id!r} "))
        .order_by(import_error.c.timestamp.desc()).limit(1)).first()
