"""Variables: stored with the value encrypted (``secret_values``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography.fernet import MultiFernet
from sqlalchemy import Connection, delete, func, insert, select, update

from statewright.db.repositories.secret_values import decrypt_row, decrypt_rows, encrypt
from statewright.db.tables_secrets import variable

__all__ = ["VariableRecord", "count", "delete_one", "get", "list_all", "put"]


@dataclass
class VariableRecord:
    key: str
    val: str | None
    description: str | None = None
    id: int | None = None


def _record(cipher: MultiFernet, row: Any, bad: list[tuple[str, int, str]]) -> VariableRecord:
    return VariableRecord(key=row.key, val=decrypt_row(cipher, "variable", row, bad)["val"],
                          description=row.description, id=row.id)


def get(conn: Connection, cipher: MultiFernet, key: str) -> VariableRecord | None:
    """The variable ``key``, or None; raises ``UndecryptableRows`` naming its id."""
    found = list_all(conn, cipher, key=key)
    return found[0] if found else None


def list_all(conn: Connection, cipher: MultiFernet, *, key: str | None = None,
             limit: int | None = None, offset: int = 0) -> list[VariableRecord]:
    """Variables by key; raises ``UndecryptableRows`` naming every row that fails."""
    query = select(variable).order_by(variable.c.key).offset(offset)
    if key is not None:
        query = query.where(variable.c.key == key)
    if limit is not None:
        query = query.limit(limit)
    return decrypt_rows(conn.execute(query).all(), lambda row, bad: _record(cipher, row, bad))


def keys(conn: Connection, wanted: list[str] | None = None) -> set[str]:
    query = select(variable.c.key)
    if wanted is not None:
        query = query.where(variable.c.key.in_(wanted))
    return set(conn.execute(query).scalars())


def count(conn: Connection) -> int:
    return int(conn.execute(select(func.count()).select_from(variable)).scalar_one())


def put(conn: Connection, cipher: MultiFernet, key: str, val: str, *, now: datetime,
        description: str | None = None, keep_description: bool = False) -> bool:
    """Insert or replace; True when created. ``keep_description`` leaves an existing
    description alone when ``description`` is None."""
    token = encrypt(cipher, val)
    existing = conn.execute(select(variable.c.id).where(variable.c.key == key)).first()
    if existing is None:
        conn.execute(insert(variable).values(key=key, val=token, description=description,
                                             updated_at=now))
        return True
    values: dict[str, Any] = {"val": token, "updated_at": now}
    if description is not None or not keep_description:
        values["description"] = description
    conn.execute(update(variable).where(variable.c.id == existing.id).values(**values))
    return False


def delete_one(conn: Connection, key: str) -> bool:
    return conn.execute(delete(variable).where(variable.c.key == key)).rowcount > 0
