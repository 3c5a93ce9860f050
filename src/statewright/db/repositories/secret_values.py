"""Fernet encryption of the secret columns of connections and variables, and key rotation.

Values are encrypted as text (a Fernet token of the UTF-8 bytes). The cipher is handed in (a
``MultiFernet``: the first key encrypts, every key decrypts). A value that no key decrypts is
never overwritten: the caller is told which rows, by table and id (:class:`UndecryptableRows`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from cryptography.fernet import InvalidToken, MultiFernet
from sqlalchemy import Connection, Table, select, update

from statewright.core.errors import ConfigurationError
from statewright.db.tables_secrets import connection, variable

__all__ = ["SECRET_COLUMNS", "UndecryptableRows", "decrypt", "decrypt_rows", "encrypt", "rotate",
           "unreadable"]

R = TypeVar("R")

SECRET_COLUMNS: dict[str, tuple[Table, tuple[str, ...], str]] = {
    "connection": (connection, ("password", "extra"), "conn_id"),
    "variable": (variable, ("val",), "key"),
}


class UndecryptableRows(ConfigurationError):
    """Stored values that none of the configured Fernet keys decrypts."""

    def __init__(self, rows: Iterable[tuple[str, int, str]]) -> None:
        self.rows = sorted(set(rows))
        listed = ", ".join(f"{table} id {pk} ({name})" for table, pk, name in self.rows)
        super().__init__(
            f"{len(self.rows)} stored value(s) cannot be decrypted with the configured Fernet "
            f"key(s): {listed}. Nothing was changed. Put the key these were written with in "
            "STATEWRIGHT_FERNET_KEY (after the new key: NEW_KEY,OLD_KEY), or delete and "
            "re-create these rows.")


def encrypt(cipher: MultiFernet, value: str | None) -> str | None:
    if value is None:
        return None
    return cipher.encrypt(value.encode("utf-8")).decode("ascii")


def decrypt(cipher: MultiFernet, token: str | None, *, where: tuple[str, int, str]) -> str | None:
    """The plaintext of ``token``; raises :class:`UndecryptableRows` naming ``where``."""
    if token is None:
        return None
    try:
        return cipher.decrypt(token.encode("ascii")).decode("utf-8")
    except (InvalidToken, UnicodeError):
        raise UndecryptableRows([where]) from None


def decrypt_row(cipher: MultiFernet, table: str, row: Any, bad: list[tuple[str, int, str]],
                ) -> dict[str, str | None]:
    """The decrypted secret columns of ``row``; rows that fail are added to ``bad``."""
    _, columns, name_col = SECRET_COLUMNS[table]
    out: dict[str, str | None] = {}
    for col in columns:
        try:
            out[col] = decrypt(cipher, getattr(row, col), where=(table, row.id,
                                                                 getattr(row, name_col)))
        except UndecryptableRows as exc:
            bad.extend(exc.rows)
            out[col] = None
    return out


def decrypt_rows(rows: Iterable[Any],
                 make: Callable[[Any, list[tuple[str, int, str]]], R]) -> list[R]:
    """``make(row, bad)`` for every row; then, when any row failed to decrypt (``make`` adds
    it to ``bad``), :class:`UndecryptableRows` naming all of them."""
    bad: list[tuple[str, int, str]] = []
    records = [make(row, bad) for row in rows]
    if bad:
        raise UndecryptableRows(bad)
    return records


def unreadable(conn: Connection, cipher: MultiFernet) -> list[tuple[str, int, str]]:
    """Every (table, id, name) whose stored values the cipher cannot decrypt."""
    bad: list[tuple[str, int, str]] = []
    for name, (table, _, _) in SECRET_COLUMNS.items():
        for row in conn.execute(select(table)).all():
            decrypt_row(cipher, name, row, bad)
    return sorted(set(bad))


def rotate(conn: Connection, cipher: MultiFernet) -> dict[str, int]:
    """Re-encrypt every secret value with the cipher's first key (``statewright
    rotate-fernet-key``). All rows are decrypted first: when any cannot be, nothing is written
    and :class:`UndecryptableRows` names them. Returns the rows re-encrypted per table."""
    bad = unreadable(conn, cipher)
    if bad:
        raise UndecryptableRows(bad)
    counts: dict[str, int] = {}
    for name, (table, columns, _) in SECRET_COLUMNS.items():
        counts[name] = 0
        for row in conn.execute(select(table)).all():
            values = {col: cipher.rotate(getattr(row, col).encode("ascii")).decode("ascii")
                      for col in columns if getattr(row, col) is not None}
            if values:
                conn.execute(update(table).where(table.c.id == row.id).values(**values))
                counts[name] += 1
    return counts
