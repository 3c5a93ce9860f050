"""Connections and variables for the CLI and the API: add, read, list, delete, import,
export, test, and the Fernet key rotation. Each write is one transaction."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.request import pathname2url

from cryptography.fernet import MultiFernet
from sqlalchemy import Engine

from statewright.core.clock import Clock, utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import connections as conn_repo
from statewright.db.repositories import secret_values
from statewright.db.repositories import variables as var_repo
from statewright.sdk import masking
from statewright.sdk.connection import Connection
from statewright.services.secrets import files
from statewright.services.secrets.store import to_connection, to_record

__all__ = ["ImportReport", "SecretsAdmin"]

ACTIONS_ON_EXISTING = ("overwrite", "fail", "skip")


@dataclass
class ImportReport:
    stored: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


class SecretsAdmin:
    def __init__(self, engine: Engine, cipher: Callable[[], MultiFernet],
                 clock: Clock = utcnow) -> None:
        self.engine = engine
        self.cipher = cipher
        self.clock = clock

    # -- connections --------------------------------------------------------------------------

    def add_connection(self, conn: Connection, *, overwrite: bool = False) -> bool:
        """Store ``conn``; True when created. An existing conn_id raises ``KeyError`` unless
        ``overwrite``."""
        record = to_record(conn)
        with transaction(self.engine) as c:
            return conn_repo.put(c, self.cipher(), record, now=self.clock(), overwrite=overwrite)

    def get_connection(self, conn_id: str) -> Connection | None:
        with self.engine.connect() as c:
            record = conn_repo.get(c, self.cipher(), conn_id)
        return None if record is None else to_connection(record)

    def list_connections(self, *, conn_id: str | None = None, limit: int | None = None,
                         offset: int = 0) -> list[Connection]:
        with self.engine.connect() as c:
            records = conn_repo.list_all(c, self.cipher(), conn_id=conn_id, limit=limit,
                                         offset=offset)
        return [to_connection(r) for r in records]

    def count_connections(self) -> int:
        with self.engine.connect() as c:
            return conn_repo.count(c)

    def delete_connection(self, conn_id: str) -> bool:
        with transaction(self.engine) as c:
            return conn_repo.delete_one(c, conn_id)

    def import_connections(self, path: str, *, overwrite: bool = False) -> ImportReport:
        """Every connection of an Airflow export file, in one transaction; a malformed file
        raises ``FileParseError`` and imports nothing. Existing ones are skipped unless
        ``overwrite``."""
        parsed = files.read_connections(path)
        records = [to_record(c) for c in parsed.values()]
        with transaction(self.engine) as c:
            stored, skipped = conn_repo.put_many(c, self.cipher(), records, now=self.clock(),
                                                 overwrite=overwrite)
        return ImportReport(stored, skipped)

    def export_connections(self, file_format: str, serialization_format: str = "uri") -> str:
        return files.dump_connections(self.list_connections(), file_format,
                                      serialization_format)

    # -- variables ----------------------------------------------------------------------------

    def set_variable(self, key: str, value: str, description: str | None = None) -> bool:
        if not key or not key.strip():
            raise ValueError("a variable key must not be empty")
        with transaction(self.engine) as c:
            return var_repo.put(c, self.cipher(), key, value, now=self.clock(),
                                description=description)

    def get_variable(self, key: str) -> var_repo.VariableRecord | None:
        with self.engine.connect() as c:
            return var_repo.get(c, self.cipher(), key)

    def list_variables(self, *, limit: int | None = None,
                       offset: int = 0) -> list[var_repo.VariableRecord]:
        with self.engine.connect() as c:
            return var_repo.list_all(c, self.cipher(), limit=limit, offset=offset)

    def count_variables(self) -> int:
        with self.engine.connect() as c:
            return var_repo.count(c)

    def delete_variable(self, key: str) -> bool:
        with transaction(self.engine) as c:
            return var_repo.delete_one(c, key)

    def import_variables(self, path: str, *,
                         action_on_existing_key: str = "overwrite") -> ImportReport:
        """Every variable of the file, in one transaction (Airflow's ``variables import``):
        ``overwrite``, ``skip`` or ``fail`` (nothing imported) for existing keys."""
        if action_on_existing_key not in ACTIONS_ON_EXISTING:
            raise ValueError(f"action_on_existing_key must be one of "
                             f"{', '.join(ACTIONS_ON_EXISTING)}, got {action_on_existing_key!r}")
        parsed = files.read_variables(path)
        report = ImportReport()
        with transaction(self.engine) as c:
            existing = var_repo.keys(c, list(parsed))
            if action_on_existing_key == "fail" and existing:
                raise KeyError(f"Failed. These keys: {sorted(existing)} already exist; "
                               "nothing was imported")
            cipher, now = self.cipher(), self.clock()
            for key, value in parsed.items():
                if action_on_existing_key == "skip" and key in existing:
                    report.skipped.append(key)
                    continue
                var_repo.put(c, cipher, key, value.value, now=now,
                             description=value.description)
                report.stored.append(key)
        return report

    def export_variables(self) -> str:
        return files.dump_variables([(v.key, v.val, v.description)
                                     for v in self.list_variables()])

    # -- keys ---------------------------------------------------------------------------------

    def rotate_fernet_key(self) -> dict[str, int]:
        """Re-encrypt every stored secret with the first key (nothing written when a row
        cannot be decrypted: ``UndecryptableRows`` names them)."""
        with transaction(self.engine) as c:
            return secret_values.rotate(c, self.cipher())

    def unreadable(self) -> list[tuple[str, int, str]]:
        with self.engine.connect() as c:
            return secret_values.unreadable(c, self.cipher())


def test_connection(conn: Connection) -> tuple[bool, str]:
    """Whether the connection works: SQL types run ``SELECT 1``; http(s) sends a GET. A SQLite
    database is opened read-only, and a path with none is not created."""
    if conn.conn_type == "sqlite":
        return _test_sqlite(conn.host or conn.schema or "")
    import statewright.providers.common.sql.hooks.sql  # noqa: F401  (the SQL types' hook)
    from statewright.providers import load_hook_for
    from statewright.sdk.http_hook import HttpHook

    load_hook_for(conn.conn_type)  # smtp, aws
    params = {"method": "GET"} if conn.conn_type in HttpHook.conn_types else None
    try:
        hook = conn.get_hook(hook_params=params)
    except ValueError:
        return False, f"no test is known for connections of type {conn.conn_type!r}"
    ok, message = hook.test_connection()
    return bool(ok), masking.redact(str(message), secrets=[conn.password or ""])


def _test_sqlite(path: str) -> tuple[bool, str]:
    if not path or path == ":memory:":
        return False, "a SQLite connection's host is the database file's path; none is given"
    uri = "file:" + pathname2url(str(Path(path).expanduser())) + "?mode=ro"
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=5.0)) as db:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # reads the file
    except sqlite3.Error as exc:
        return False, (f"{type(exc).__name__}: {exc} (the test opens an existing database "
                       "read-only and never creates one)")
    return True, "Connection successfully tested"


def public_connection(conn: Connection) -> dict[str, Any]:
    """A connection as shown outside: no password; the extra's secrets masked."""
    extra = conn.extra_dejson
    return {
        "connection_id": conn.conn_id, "conn_type": conn.conn_type,
        "description": conn.description, "host": conn.host, "login": conn.login,
        "schema": conn.schema, "port": conn.port,
        "extra": None if conn.extra is None else _json(masking.redact(extra)),
        "has_password": bool(conn.password),
    }


def public_variable(record: var_repo.VariableRecord) -> dict[str, Any]:
    """A variable as shown outside: the value masked when its key looks sensitive."""
    value = record.val
    if masking.is_sensitive_name(record.key) and value:
        value = masking.MASK
    return {"key": record.key, "value": value, "description": record.description,
            "is_encrypted": True}


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


_registered_at: dict[int, float] = {}


def register_stored_secrets(engine: Engine, cipher: MultiFernet, *, ttl: float = 10.0) -> None:
    """Register every stored connection password and sensitive variable value for masking in
    this process (the API server masks them in what it shows); at most every ``ttl`` seconds.
    Rows that cannot be decrypted are skipped here: masking by name still applies."""
    import logging
    import time

    now = time.monotonic()
    if now - _registered_at.get(id(engine), -ttl) < ttl:
        return
    _registered_at[id(engine)] = now
    try:
        admin = SecretsAdmin(engine, lambda: cipher)
        for conn in admin.list_connections():
            masking.mask_secret(conn.password)
            for name, value in conn.extra_dejson.items():
                if masking.is_sensitive_name(name):
                    masking.mask_secret(value)
        for var in admin.list_variables():
            if masking.is_sensitive_name(var.key):
                masking.mask_secret(var.val)
    except secret_values.UndecryptableRows as exc:
        logging.getLogger("statewright.api").warning("stored secrets not registered: %s", exc)
