"""The DAG processor's memory of each DAG file: size, mtime, content hash, the DAGs it defined."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, select, update

from statewright.db.tables import dag_file


def under(conn: Connection, folder_prefix: str) -> dict[str, Any]:
    """fileloc → row, for the files below ``folder_prefix``."""
    rows = conn.execute(
        select(dag_file).where(dag_file.c.fileloc.startswith(folder_prefix, autoescape=True))
    ).all()
    return {r.fileloc: r for r in rows}


def get(conn: Connection, fileloc: str) -> Any:
    return conn.execute(select(dag_file).where(dag_file.c.fileloc == fileloc)).first()


def save(conn: Connection, fileloc: str, *, mtime: float, size: int, content_hash: str | None,
         dag_ids: Sequence[str], now: datetime, duration: float | None) -> None:
    values = {"mtime": mtime, "size": size, "content_hash": content_hash,
              "dag_ids": sorted(set(dag_ids)), "last_parsed_at": now,
              "parse_duration": duration}
    res = conn.execute(update(dag_file).where(dag_file.c.fileloc == fileloc).values(**values))
    if res.rowcount == 0:
        conn.execute(dag_file.insert().values(fileloc=fileloc, **values))


def touch(conn: Connection, fileloc: str, *, mtime: float, size: int) -> None:
    """The file was saved again without a change of content."""
    conn.execute(update(dag_file).where(dag_file.c.fileloc == fileloc)
                 .values(mtime=mtime, size=size))


def forget(conn: Connection, filelocs: Iterable[str]) -> None:
    names = list(filelocs)
    if names:
        conn.execute(delete(dag_file).where(dag_file.c.fileloc.in_(names)))


def get_many(conn: Connection, filelocs: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    names = list(filelocs)
    for start in range(0, len(names), 400):
        for r in conn.execute(select(dag_file).where(
                dag_file.c.fileloc.in_(names[start:start + 400]))).all():
            out[r.fileloc] = r
    return out


def save_many(conn: Connection, rows: Sequence[dict[str, Any]], now: datetime) -> None:
    """Replace the rows of these files: dicts of fileloc, mtime, size, content_hash, dag_ids,
    duration."""
    if not rows:
        return
    forget(conn, [r["fileloc"] for r in rows])
    conn.execute(dag_file.insert(), [
        {"fileloc": r["fileloc"], "mtime": r["mtime"], "size": r["size"],
         "content_hash": r["content_hash"], "dag_ids": sorted(set(r["dag_ids"])),
         "last_parsed_at": now, "parse_duration": r["duration"]} for r in rows])
