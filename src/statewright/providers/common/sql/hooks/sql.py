"""``DbApiHook``: SQL on a PostgreSQL, MySQL/MariaDB or SQLite connection, through a
SQLAlchemy engine made from the connection.

As Airflow's common-sql ``DbApiHook``: ``get_records``, ``get_first``, ``run`` (with
``parameters`` in the driver's style — ``%s`` / ``%(name)s`` for PostgreSQL and MySQL, ``?`` /
``:name`` for SQLite —, a ``handler``, ``split_statements`` and ``return_last``),
``insert_rows``, ``get_sqlalchemy_engine``, ``get_uri`` and ``test_connection``.

Connection types: ``postgres`` (psycopg 3), ``mysql`` and ``mariadb`` (PyMySQL), ``sqlite``
(the file is the connection's host, or its schema; ``:memory:`` works). The extra's keys are
passed to the driver as query parameters of the URL (``sslmode``, ``charset``, …).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from typing import Any

import sqlparse
from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from statewright.sdk.basehook import BaseHook
from statewright.sdk.connection import Connection

__all__ = ["DbApiHook", "fetch_all_handler", "fetch_one_handler"]

_DRIVERS = {"postgres": "postgresql+psycopg", "mysql": "mysql+pymysql",
            "mariadb": "mysql+pymysql"}


def fetch_all_handler(cursor: Any) -> list[tuple[Any, ...]] | None:
    """Every row of a statement that returns rows (None for one that does not)."""
    if cursor.description is None:
        return None
    return [tuple(row) for row in cursor.fetchall()]


def fetch_one_handler(cursor: Any) -> tuple[Any, ...] | None:
    if cursor.description is None:
        return None
    row = cursor.fetchone()
    return None if row is None else tuple(row)


class DbApiHook(BaseHook):
    conn_name_attr = "conn_id"
    default_conn_name = "default_conn_id"
    conn_types = ("postgres", "mysql", "mariadb", "sqlite")
    hook_name = "SQL database"

    def __init__(self, *args: Any, schema: str | None = None, log_sql: bool = True,
                 engine_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__()
        conn_id = kwargs.pop(self.conn_name_attr, None) or kwargs.pop("conn_id", None)
        if args:
            conn_id = args[0]
        if not conn_id:
            raise ValueError(f"{type(self).__name__} needs a connection id "
                             f"({self.conn_name_attr}=...)")
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected argument(s) "
                            f"{', '.join(sorted(kwargs))}")
        self.conn_id: str = conn_id
        self.schema = schema
        self.log_sql = log_sql
        self.engine_kwargs = dict(engine_kwargs or {})
        self._connection: Connection | None = None
        self._engine: Engine | None = None

    @property
    def connection(self) -> Connection:
        if self._connection is None:
            self._connection = self.get_connection(self.conn_id)
        return self._connection

    # -- engine -------------------------------------------------------------------------------

    def sqlalchemy_url(self) -> URL:
        conn = self.connection
        conn_type = conn.conn_type or ""
        if conn_type == "sqlite":
            path = conn.host or conn.schema or ":memory:"
            return URL.create("sqlite", database=path, query=_query(conn))
        driver = _DRIVERS.get(conn_type)
        if driver is None:
            raise ValueError(
                f"connection {self.conn_id!r} has the type {conn_type!r}; DbApiHook serves "
                f"{', '.join(self.conn_types)}")
        return URL.create(driver, username=conn.login, password=conn.password,
                          host=conn.host, port=conn.port, database=self.schema or conn.schema,
                          query=_query(conn))

    def get_uri(self) -> str:
        """The SQLAlchemy URL of the connection (with the password)."""
        return self.sqlalchemy_url().render_as_string(hide_password=False)

    def get_sqlalchemy_engine(self, engine_kwargs: dict[str, Any] | None = None) -> Engine:
        if engine_kwargs is not None:
            return create_engine(self.sqlalchemy_url(), **engine_kwargs)
        if self._engine is None:
            # No pool: a hook lives for a task's try, and each connection it hands out is
            # closed for real when its user closes it (none left open for the garbage collector)
            self._engine = create_engine(self.sqlalchemy_url(),
                                         **{"poolclass": NullPool, **self.engine_kwargs})
        return self._engine

    def get_conn(self) -> Any:
        """A DB-API connection (the driver's), from the engine's pool."""
        return self.get_sqlalchemy_engine().raw_connection()

    # -- queries ------------------------------------------------------------------------------

    def run(self, sql: str | Iterable[str], autocommit: bool = False,
            parameters: Sequence[Any] | dict[str, Any] | None = None,
            handler: Callable[[Any], Any] | None = None, split_statements: bool = False,
            return_last: bool = True) -> Any:
        """Run one statement or several; with a ``handler`` return what it makes of each
        statement's cursor (for one SQL string: of its last statement, unless
        ``split_statements`` and not ``return_last``), else None. The
        statements run in one transaction, committed at the end (each one committed on its own
        with ``autocommit``)."""
        single = isinstance(sql, str)
        statements = self.split_sql_string(sql) if single and split_statements else (
            [sql] if single else list(sql))
        if not statements:
            raise ValueError("no SQL statement to run")
        results: list[Any] = []
        with closing(self.get_conn()) as conn:
            for statement in statements:
                with closing(conn.cursor()) as cursor:
                    self._execute(cursor, statement, parameters)
                    if handler is not None:
                        results.append(handler(cursor))
                if autocommit:
                    conn.commit()
            conn.commit()
        if handler is None:
            return None
        if single and (return_last or not split_statements):
            return results[-1]
        return results

    def _execute(self, cursor: Any, statement: str, parameters: Any) -> None:
        if self.log_sql:
            self.log.info("Running statement: %s, parameters: %s", statement, parameters)
        if parameters is None:
            cursor.execute(statement)
        else:
            cursor.execute(statement, parameters)

    def get_records(self, sql: str, parameters: Sequence[Any] | dict[str, Any] | None = None,
                    ) -> list[tuple[Any, ...]]:
        return self.run(sql, parameters=parameters, handler=fetch_all_handler) or []

    def get_first(self, sql: str, parameters: Sequence[Any] | dict[str, Any] | None = None,
                  ) -> tuple[Any, ...] | None:
        return self.run(sql, parameters=parameters, handler=fetch_one_handler)  # type: ignore[no-any-return]

    def insert_rows(self, table: str, rows: Iterable[Sequence[Any]],
                    target_fields: Sequence[str] | None = None, commit_every: int = 1000,
                    replace: bool = False) -> int:
        """Insert ``rows`` (sequences of values) into ``table``, committing every
        ``commit_every`` rows; ``replace`` replaces rows with the same key (PostgreSQL needs
        ``replace_index`` support and is refused). Returns the rows inserted."""
        mark = "?" if self.connection.conn_type == "sqlite" else "%s"
        columns = f" ({', '.join(target_fields)})" if target_fields else ""
        verb = "INSERT"
        if replace:
            if self.connection.conn_type == "postgres":
                raise ValueError("insert_rows(replace=True) is not available for PostgreSQL "
                                 "connections; use run() with INSERT ... ON CONFLICT")
            verb = "REPLACE" if self.connection.conn_type in ("mysql", "mariadb") else (
                "INSERT OR REPLACE")
        count = 0
        batch: list[Sequence[Any]] = []
        with closing(self.get_conn()) as conn:
            for row in rows:
                batch.append(tuple(row))
                if len(batch) >= commit_every:
                    count += self._insert_batch(conn, verb, table, columns, mark, batch)
                    batch = []
            if batch:
                count += self._insert_batch(conn, verb, table, columns, mark, batch)
        self.log.info("Inserted %s rows into %s", count, table)
        return count

    @staticmethod
    def _insert_batch(conn: Any, verb: str, table: str, columns: str, mark: str,
                      batch: list[Sequence[Any]]) -> int:
        width = len(batch[0])
        sql = f"{verb} INTO {table}{columns} VALUES ({', '.join([mark] * width)})"
        with closing(conn.cursor()) as cursor:
            cursor.executemany(sql, batch)
        conn.commit()
        return len(batch)

    @staticmethod
    def split_sql_string(sql: str) -> list[str]:
        """The statements of ``sql`` (split with sqlparse), without empty ones."""
        statements = [s.strip().rstrip(";").strip() for s in sqlparse.split(sql)]
        return [s for s in statements if s and not _only_comments(s)]

    def test_connection(self) -> tuple[bool, str]:
        try:
            self.get_first("SELECT 1")
        except Exception as exc:
            return False, f"{type(exc).__name__}: {exc}"
        return True, "Connection successfully tested"


def _query(conn: Connection) -> dict[str, str]:
    return {str(k): str(v) for k, v in conn.extra_dejson.items()}


def _only_comments(statement: str) -> bool:
    stripped = sqlparse.format(statement, strip_comments=True).strip()
    return not stripped
