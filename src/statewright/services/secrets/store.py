"""The statewright database as the SDK's metadata store (``statewright.sdk.secrets``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from cryptography.fernet import MultiFernet
from sqlalchemy import Engine

from statewright.core.clock import Clock, utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import connections as conn_repo
from statewright.db.repositories import variables as var_repo
from statewright.sdk import secrets
from statewright.sdk.connection import Connection

__all__ = ["DatabaseStore", "LazyDatabaseStore", "install_database_store", "to_connection",
           "to_record",
           "using_database_store"]


def to_connection(record: conn_repo.ConnectionRecord) -> Connection:
    return Connection(conn_id=record.conn_id, conn_type=record.conn_type,
                      description=record.description, host=record.host, schema=record.schema,
                      login=record.login, password=record.password, port=record.port,
                      extra=record.extra or None)


def to_record(c: Connection) -> conn_repo.ConnectionRecord:
    if not c.conn_id:
        raise ValueError("a connection needs a conn_id")
    if not c.conn_type:
        raise ValueError(f"connection {c.conn_id!r} needs a conn_type")
    return conn_repo.ConnectionRecord(
        conn_id=c.conn_id, conn_type=c.conn_type, description=c.description, host=c.host,
        schema=c.schema, login=c.login, password=c.password, port=c.port, extra=c.extra)


class DatabaseStore:
    """Reads and writes connections and variables in the database, decrypting with ``cipher``
    (a callable, so the cipher is loaded only when a lookup needs it)."""

    def __init__(self, engine: Engine, cipher: Callable[[], MultiFernet],
                 clock: Clock = utcnow) -> None:
        self.engine = engine
        self.cipher = cipher
        self.clock = clock

    def get_connection(self, conn_id: str) -> Connection | None:
        with self.engine.connect() as conn:
            record = conn_repo.get(conn, self.cipher(), conn_id)
        return None if record is None else to_connection(record)

    def get_variable(self, key: str) -> str | None:
        with self.engine.connect() as conn:
            record = var_repo.get(conn, self.cipher(), key)
        return None if record is None else record.val

    def set_variable(self, key: str, value: str, description: str | None) -> None:
        with transaction(self.engine) as conn:
            var_repo.put(conn, self.cipher(), key, value, now=self.clock(),
                         description=description, keep_description=True)


class LazyDatabaseStore:
    """A ``DatabaseStore`` whose engine is made on the first lookup (in a forked DAG-import
    child, each child makes its own; a file that reads nothing opens no connection)."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self._store: DatabaseStore | None = None

    def _real(self) -> DatabaseStore:
        if self._store is None:
            from statewright.db.engine import make_engine
            from statewright.services.worker.deferral import current_cipher

            self._store = DatabaseStore(make_engine(self.database_url), current_cipher)
        return self._store

    def get_connection(self, conn_id: str) -> Connection | None:
        return self._real().get_connection(conn_id)

    def get_variable(self, key: str) -> str | None:
        return self._real().get_variable(key)

    def set_variable(self, key: str, value: str, description: str | None) -> None:
        self._real().set_variable(key, value, description)


def install_database_store(engine: Engine) -> DatabaseStore:
    """Make the database this process's store for ``Variable`` and ``BaseHook`` (the CLI, the
    DAG processor, the triggerer, ``dag.test()``)."""
    from statewright.services.worker.deferral import current_cipher

    store = DatabaseStore(engine, current_cipher)
    secrets.install_store(store)
    return store


@contextlib.contextmanager
def using_database_store(engine: Engine) -> Iterator[DatabaseStore]:
    """The database as this process's store for the duration of the block (``dag.test()``:
    triggers run in its process)."""
    previous = secrets.installed_store()
    store = install_database_store(engine)
    try:
        yield store
    finally:
        secrets.install_store(previous)
