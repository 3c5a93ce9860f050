"""``DbApiHook``: SQL on a PostgreSQL, MySQL/MariaDB or SQLite connection, through a
SQLAlchemy engine made from the connection.

As Airflow's common-sql ``DbApiHook``: ``get_records``, ``get_first``, ``run`` (with
``parameters`` in the driver's style — ``%s`` / ``%(name)s`` for PostgreSQL and MySQL, ``?`` /
``:name`` for SQLite —, a ``handler``, ``split_statements`` and ``return_last``),
``insert_rows``, ``get_df`` / ``get_pandas_df`` (with pandas installed), ``get_cursor``,
``get_autocommit`` / ``set_autocommit``, ``get_sqlalchemy_engine``, ``sqlalchemy_url``,
``get_uri`` and ``test_connection``. ``PostgresHook``, ``MySqlHook`` and ``SqliteHook`` (under
``statewright.providers.<name>.hooks``) are this hook with their connection argument and
their driver's extras.

Connection types: ``postgres`` (psycopg 3), ``mysql`` and ``mariadb`` (PyMySQL), ``sqlite``
(the file is the connection's host, or its schema; ``:memory:`` works). The extra's keys are
passed to the driver as query parameters of the URL (``sslmode``, ``charset``, …), but for the
keys Airflow's hooks read themselves (``NOT_DRIVER_EXTRAS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from typing import Any, ClassVar

import sqlparse
from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from statewright.providers.common.sql.hooks.handlers import (
    fetch_all_handler,
    fetch_one_handler,
)
from statewright.sdk.basehook import BaseHook
from statewright.sdk.connection import Connection

__all__ = ["NOT_DRIVER_EXTRAS", "DbApiHook", "fetch_all_handler", "fetch_one_handler"]

_DRIVERS = {"postgres": "postgresql+psycopg", "mysql": "mysql+pymysql",
            "mariadb": "mysql+pymysql"}

NOT_DRIVER_EXTRAS = frozenset({
    "client", "cursor", "iam", "redshift", "redshift-serverless", "aws_conn_id",
    "azure_conn_id", "sqlalchemy_scheme", "sqlalchemy_query", "sqlalchemy_options",
    "enable_log_db_messages", "log_sql", "cluster-identifier", "workgroup-name", "region_name",
})
"""Extra keys Airflow's SQL hooks read themselves: never passed to the driver."""

Parameters = Sequence[Any] | dict[str, Any] | None


class DbApiHook(BaseHook):
    conn_name_attr = "conn_id"
    default_conn_name = "default_conn_id"
    conn_types: ClassVar[tuple[str, ...]] = ("postgres", "mysql", "mariadb", "sqlite")
    hook_name = "SQL database"
    supports_autocommit: ClassVar[bool] = True
    url_kind: ClassVar[str | None] = None
    """The kind of URL the hook makes whatever the connection's type (``postgres``,
    ``mysql``, ``sqlite``; None: by the connection's type)."""

    def __init__(self, *args: Any, schema: str | None = None, log_sql: bool = True,
                 engine_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__()
        conn_id = kwargs.pop(self.conn_name_attr, None) or kwargs.pop("conn_id", None)
        if args:
            conn_id = args[0]
        if not conn_id and self.default_conn_name != DbApiHook.default_conn_name:
            conn_id = self.default_conn_name  # PostgresHook() is postgres_default, as in Airflow
        if not conn_id:
            raise ValueError(f"{type(self).__name__} needs a connection id "
                             f"({self.conn_name_attr}=...)")
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected argument(s) "
                            f"{', '.join(sorted(kwargs))}")
        self.conn_id: str = conn_id
        setattr(self, self.conn_name_attr, conn_id)
        self.schema = schema
        self.log_sql = log_sql
        self.engine_kwargs = dict(engine_kwargs or {})
        self.descriptions: list[Sequence[Any] | None] = []
        self._connection: Connection | None = None
        self._engine: Engine | None = None

    @property
    def connection(self) -> Connection:
        if self._connection is None:
            self._connection = self.get_connection(self.conn_id)
        return self._connection

    @property
    def placeholder(self) -> str:
        """The driver's positional parameter mark (``?`` for SQLite, ``%s`` otherwise)."""
        return "?" if self.connection.conn_type == "sqlite" else "%s"

    @property
    def last_description(self) -> Sequence[Any] | None:
        return self.descriptions[-1] if self.descriptions else None

    # -- engine -------------------------------------------------------------------------------

    @property
    def sqlalchemy_url(self) -> URL:
        conn = self.connection
        conn_type = self.url_kind or conn.conn_type or ""
        query, _ = self._driver_extras()
        if conn_type == "sqlite":
            path = conn.host or conn.schema or ":memory:"
            return URL.create("sqlite", database=path, query=query)
        driver = _DRIVERS.get(conn_type)
        if driver is None:
            raise ValueError(
                f"connection {self.conn_id!r} has the type {conn_type!r}; "
                f"{type(self).__name__} serves {', '.join(self.conn_types)}")
        return URL.create(driver, username=conn.login, password=conn.password,
                          host=conn.host, port=conn.port, database=self.schema or conn.schema,
                          query=query)

    def _driver_extras(self) -> tuple[dict[str, str], dict[str, Any]]:
        """The extra's keys for the driver: text ones as URL query parameters, structured ones
        (an ``ssl`` dict, a boolean) as connect arguments."""
        query: dict[str, str] = {}
        args: dict[str, Any] = {}
        for key, value in self.connection.extra_dejson.items():
            if key in NOT_DRIVER_EXTRAS:
                continue
            if isinstance(value, dict | list | bool):
                args[str(key)] = value
            else:
                query[str(key)] = str(value)
        return query, args

    def get_uri(self) -> str:
        """The SQLAlchemy URL of the connection (with the password)."""
        return self.sqlalchemy_url.render_as_string(hide_password=False)

    def get_sqlalchemy_engine(self, engine_kwargs: dict[str, Any] | None = None) -> Engine:
        if engine_kwargs is not None:
            return create_engine(self.sqlalchemy_url, **self._engine_options(engine_kwargs))
        if self._engine is None:
            # No pool: a hook lives for a task's try, and each connection it hands out is
            # closed for real when its user closes it (none left open for the garbage collector)
            self._engine = create_engine(
                self.sqlalchemy_url,
                **self._engine_options({"poolclass": NullPool, **self.engine_kwargs}))
        return self._engine

    def _engine_options(self, options: dict[str, Any]) -> dict[str, Any]:
        _, args = self._driver_extras()
        if args:
            options = {**options, "connect_args": {**args, **options.get("connect_args", {})}}
        return options

    def get_conn(self) -> Any:
        """A DB-API connection of the driver (psycopg, PyMySQL, sqlite3), as Airflow's hooks
        return: the caller closes it, and ``with conn:`` does what the driver's does (commits
        at the end). Made by the engine, then detached from it."""
        pooled = self.get_sqlalchemy_engine().raw_connection()
        driver = pooled.driver_connection
        pooled.detach()
        return driver

    def get_cursor(self) -> Any:
        return self.get_conn().cursor()

    def set_autocommit(self, conn: Any, autocommit: bool) -> None:
        """Turn the driver connection's autocommit mode on or off."""
        driver = getattr(conn, "driver_connection", conn)
        mode = getattr(driver, "autocommit", None)
        if callable(mode):  # PyMySQL
            mode(autocommit)
        elif mode is not None or not hasattr(driver, "isolation_level"):  # psycopg
            driver.autocommit = autocommit
        else:  # sqlite3 before Python 3.12's autocommit attribute
            driver.isolation_level = None if autocommit else ""

    def get_autocommit(self, conn: Any) -> bool:
        driver = getattr(conn, "driver_connection", conn)
        mode = getattr(driver, "autocommit", None)
        if callable(mode):
            return bool(driver.get_autocommit())
        if mode is not None:
            return bool(mode)
        return getattr(driver, "isolation_level", "") is None

    # -- queries ------------------------------------------------------------------------------

    def run(self, sql: str | Iterable[str], autocommit: bool = False,
            parameters: Parameters = None, handler: Callable[[Any], Any] | None = None,
            split_statements: bool = False, return_last: bool = True) -> Any:
        """Run one statement or several; with a ``handler`` return what it makes of each
        statement's cursor (for one SQL string: of its last statement, unless
        ``split_statements`` and not ``return_last``), else None. The statements run in one
        transaction, committed at the end; with ``autocommit`` the connection is in autocommit
        mode (each statement its own transaction: ``CREATE DATABASE``, ``VACUUM``)."""
        single = isinstance(sql, str)
        if isinstance(sql, str):
            statements = self.split_sql_string(sql) if split_statements else [sql]
        else:
            statements = list(sql)
        if not statements:
            raise ValueError("no SQL statement to run")
        results: list[Any] = []
        self.descriptions = []
        with closing(self.get_conn()) as conn:
            if autocommit and self.supports_autocommit:
                self.set_autocommit(conn, True)
            for statement in statements:
                with closing(conn.cursor()) as cursor:
                    self._execute(cursor, statement, parameters)
                    self.descriptions.append(cursor.description)
                    if handler is not None:
                        results.append(handler(cursor))
            if not (autocommit and self.supports_autocommit):
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

    def get_records(self, sql: str, parameters: Parameters = None) -> list[tuple[Any, ...]]:
        return self.run(sql, parameters=parameters, handler=fetch_all_handler) or []

    def get_first(self, sql: str, parameters: Parameters = None) -> tuple[Any, ...] | None:
        return self.run(sql, parameters=parameters, handler=fetch_one_handler)  # type: ignore[no-any-return]

    def get_df(self, sql: str, parameters: Parameters = None, *, df_type: str = "pandas",
               **kwargs: Any) -> Any:
        """The result of ``sql`` as a pandas DataFrame (pandas must be installed)."""
        if df_type != "pandas":
            raise ValueError(f"get_df: df_type {df_type!r} is not supported here; use 'pandas'")
        try:
            import pandas
        except ImportError as exc:
            raise ImportError(f"{type(self).__name__}.get_df needs pandas: pip install pandas"
                              ) from exc
        if isinstance(parameters, list):
            parameters = tuple(parameters)  # one set of parameters, not a list of sets
        with self.get_sqlalchemy_engine().connect() as conn:
            return pandas.read_sql(sql, conn, params=parameters, **kwargs)

    def get_pandas_df(self, sql: str, parameters: Parameters = None, **kwargs: Any) -> Any:
        """Airflow 2's name of ``get_df``."""
        return self.get_df(sql, parameters, **kwargs)

    def insert_rows(self, table: str, rows: Iterable[Sequence[Any]],
                    target_fields: Sequence[str] | None = None, commit_every: int = 1000,
                    replace: bool = False, **kwargs: Any) -> int:
        """Insert ``rows`` (sequences of values) into ``table``, committing every
        ``commit_every`` rows; ``replace`` replaces rows with the same key (``REPLACE`` on
        MySQL, ``INSERT OR REPLACE`` on SQLite; PostgresHook takes ``replace_index``). Returns
        the rows inserted. Airflow's ``executemany`` and ``fast_executemany`` are accepted:
        the rows always go in batches."""
        kwargs.pop("executemany", None)
        kwargs.pop("fast_executemany", None)
        kwargs.pop("autocommit", None)
        count = 0
        batch: list[Sequence[Any]] = []
        with closing(self.get_conn()) as conn:
            for row in rows:
                batch.append(tuple(row))
                if len(batch) >= commit_every:
                    count += self._insert_batch(conn, table, batch, target_fields, replace,
                                                **kwargs)
                    batch = []
            if batch:
                count += self._insert_batch(conn, table, batch, target_fields, replace, **kwargs)
        self.log.info("Inserted %s rows into %s", count, table)
        return count

    def _insert_batch(self, conn: Any, table: str, batch: list[Sequence[Any]],
                      target_fields: Sequence[str] | None, replace: bool,
                      **kwargs: Any) -> int:
        sql = self._generate_insert_sql(table, len(batch[0]), target_fields, replace, **kwargs)
        with closing(conn.cursor()) as cursor:
            cursor.executemany(sql, batch)
        conn.commit()
        return len(batch)

    def _generate_insert_sql(self, table: str, width: int,
                             target_fields: Sequence[str] | None, replace: bool,
                             **kwargs: Any) -> str:
        if kwargs:
            raise TypeError(f"{type(self).__name__}.insert_rows: unexpected argument(s) "
                            f"{', '.join(sorted(kwargs))}")
        columns = f" ({', '.join(target_fields)})" if target_fields else ""
        verb = "INSERT"
        if replace:
            conn_type = self.connection.conn_type
            if conn_type == "postgres":
                raise ValueError("insert_rows(replace=True) on PostgreSQL needs PostgresHook "
                                 "and replace_index=<the key columns>")
            verb = "REPLACE" if conn_type in ("mysql", "mariadb") else "INSERT OR REPLACE"
        marks = ", ".join([self.placeholder] * width)
        return f"{verb} INTO {table}{columns} VALUES ({marks})"

    def bulk_load(self, table: str, tmp_file: str) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no bulk_load")

    def bulk_dump(self, table: str, tmp_file: str) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no bulk_dump")

    @staticmethod
    def split_sql_string(sql: str, strip_semicolon: bool = True) -> list[str]:
        """The statements of ``sql`` (split with sqlparse), without empty ones."""
        statements = [s.strip() for s in sqlparse.split(sql)]
        if strip_semicolon:
            statements = [s.rstrip(";").strip() for s in statements]
        return [s for s in statements if s and not _only_comments(s)]

    def test_connection(self) -> tuple[bool, str]:
        try:
            self.get_first("SELECT 1")
        except Exception as exc:
            return False, f"{type(exc).__name__}: {exc}"
        return True, "Connection successfully tested"


def _only_comments(statement: str) -> bool:
    stripped = sqlparse.format(statement, strip_comments=True).strip()
    return not stripped
