"""Connections: stored with the password and extra encrypted (``secret_values``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from cryptography.fernet import MultiFernet
from sqlalchemy import Connection, delete, func, insert, select, update

from statewright.db.repositories.secret_values import decrypt_row, decrypt_rows, encrypt
from statewright.db.tables_secrets import connection

__all__ = ["ConnectionRecord", "count", "delete_one", "get", "list_all", "put", "put_many"]


@dataclass
class ConnectionRecord:
    """A connection's fields, decrypted."""

    conn_id: str
    conn_type: str
    description: str | None = None
    host: str | None = None
    schema: str | None = None
    login: str | None = None
    password: str | None = None
    port: int | None = None
    extra: str | None = None
    id: int | None = None


def _record(cipher: MultiFernet, row: Any, bad: list[tuple[str, int, str]]) -> ConnectionRecord:
    secrets = decrypt_row(cipher, "connection", row, bad)
    return ConnectionRecord(
        conn_id=row.conn_id, conn_type=row.conn_type, description=row.description,
        host=row.host, schema=row.schema, login=row.login, password=secrets["password"],
        port=row.port, extra=secrets["extra"], id=row.id)


def get(conn: Connection, cipher: MultiFernet, conn_id: str) -> ConnectionRecord | None:
    """The connection ``conn_id``, or None; raises ``UndecryptableRows`` naming its id."""
    found = list_all(conn, cipher, conn_id=conn_id)
    return found[0] if found else None


def list_all(conn: Connection, cipher: MultiFernet, *, conn_id: str | None = None,
             limit: int | None = None, offset: int = 0) -> list[ConnectionRecord]:
    """Connections by conn_id; raises ``UndecryptableRows`` naming every row that fails."""
    query = select(connection).order_by(connection.c.conn_id).offset(offset)
    if conn_id is not None:
        query = query.where(connection.c.conn_id == conn_id)
    if limit is not None:
        query = query.limit(limit)
    return decrypt_rows(conn.execute(query).all(), lambda row, bad: _record(cipher, row, bad))


def count(conn: Connection) -> int:
    return int(conn.execute(select(func.count()).select_from(connection)).scalar_one())


def put(conn: Connection, cipher: MultiFernet, record: ConnectionRecord, *, now: datetime,
        overwrite: bool = True) -> bool:
    """Insert or (with ``overwrite``) replace the connection; True when it was created.
    Without ``overwrite`` an existing conn_id raises ``KeyError``."""
    values = {f.name: getattr(record, f.name) for f in fields(record) if f.name != "id"}
    values["password"] = encrypt(cipher, record.password)
    values["extra"] = encrypt(cipher, record.extra)
    values["updated_at"] = now
    existing = conn.execute(select(connection.c.id).where(
        connection.c.conn_id == record.conn_id)).first()
    if existing is None:
        conn.execute(insert(connection).values(**values))
        return True
    if not overwrite:
        raise KeyError(f"A connection with conn_id {record.conn_id!r} already exists")
    conn.execute(update(connection).where(connection.c.id == existing.id).values(**values))
    return False


def put_many(conn: Connection, cipher: MultiFernet, records: Sequence[ConnectionRecord], *,
             now: datetime, overwrite: bool) -> tuple[list[str], list[str]]:
    """Store ``records`` (one transaction: the caller's); returns (stored, skipped) conn_ids —
    without ``overwrite`` existing ones are skipped."""
    stored: list[str] = []
    skipped: list[str] = []
    for record in records:
        try:
            put(conn, cipher, record, now=now, overwrite=overwrite)
            stored.append(record.conn_id)
        except KeyError:
            skipped.append(record.conn_id)
    return stored, skipped


def delete_one(conn: Connection, conn_id: str) -> bool:
    return conn.execute(delete(connection).where(connection.c.conn_id == conn_id)).rowcount > 0
