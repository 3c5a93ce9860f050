"""``PostgresHook``: ``DbApiHook`` on a ``postgres`` connection through psycopg 3.

As Airflow's: ``postgres_conn_id`` (default ``postgres_default``), ``database`` (instead of the
connection's schema), ``options`` (libpq's ``-c name=value`` run-time parameters),
``enable_log_db_messages`` (the server's notices in the task log); ``copy_expert``,
``bulk_load`` / ``bulk_dump`` (``COPY ... FROM STDIN`` / ``TO STDOUT``, tab-separated text),
``insert_rows(..., replace=True, replace_index=...)`` as ``INSERT ... ON CONFLICT``, and
``get_table_primary_key``. The extra's keys go to psycopg (``sslmode``, ``connect_timeout``,
``application_name``, ...), but Airflow's own (``iam``, ...); its ``cursor`` (``dictcursor``,
``realdictcursor``, ``namedtuplecursor``) makes rows dicts or named tuples.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from psycopg.rows import dict_row, namedtuple_row

from statewright.providers.common.sql.hooks.sql import DbApiHook

__all__ = ["PostgresHook"]

_TO_STDOUT = re.compile(r"\bTO\s+STDOUT\b", re.IGNORECASE)
_ROW_FACTORIES = {"dictcursor": dict_row, "realdictcursor": dict_row,
                  "namedtuplecursor": namedtuple_row}


class PostgresHook(DbApiHook):
    conn_name_attr = "postgres_conn_id"
    default_conn_name = "postgres_default"
    conn_type = "postgres"
    conn_types = ("postgres",)
    hook_name = "Postgres"
    url_kind = "postgres"

    def __init__(self, *args: Any, options: str | None = None,
                 enable_log_db_messages: bool = False, **kwargs: Any) -> None:
        self.database: str | None = kwargs.pop("database", None)
        if self.database:
            kwargs["schema"] = self.database
        super().__init__(*args, **kwargs)
        self.options = options
        self.enable_log_db_messages = enable_log_db_messages

    def _driver_extras(self) -> tuple[dict[str, str], dict[str, Any]]:
        query, args = super()._driver_extras()
        if self.options:
            query["options"] = self.options
        return query, args

    def get_conn(self) -> Any:
        conn = super().get_conn()
        cursor = str(self.connection.extra_dejson.get("cursor", "")).lower()
        if cursor in _ROW_FACTORIES:  # on this connection only, not the engine's
            conn.row_factory = _ROW_FACTORIES[cursor]
        if self.enable_log_db_messages:
            conn.add_notice_handler(
                lambda notice: self.log.info("%s: %s", notice.severity, notice.message_primary))
        return conn

    def copy_expert(self, sql: str, filename: str) -> None:
        """Run a ``COPY`` statement with the file ``filename`` as its STDIN, or, for ``COPY ...
        TO STDOUT``, writing its output to ``filename`` (created when missing)."""
        path = Path(filename)
        if not path.exists():
            path.touch()
        self.log.info("Running copy expert: %s, filename: %s", sql, filename)
        with closing(self.get_conn()) as conn, closing(conn.cursor()) as cursor:
            if _TO_STDOUT.search(sql):
                with path.open("wb") as out, cursor.copy(sql) as copy:
                    for data in copy:
                        out.write(data)
            else:
                with path.open("rb") as source, cursor.copy(sql) as copy:
                    while chunk := source.read(1 << 16):
                        copy.write(chunk)
            conn.commit()

    def bulk_load(self, table: str, tmp_file: str) -> None:
        """Load the tab-separated file ``tmp_file`` into ``table``."""
        self.copy_expert(f"COPY {table} FROM STDIN", tmp_file)

    def bulk_dump(self, table: str, tmp_file: str) -> None:
        """Write ``table`` to ``tmp_file``, tab-separated."""
        self.copy_expert(f"COPY {table} TO STDOUT", tmp_file)

    def get_table_primary_key(self, table: str, schema: str | None = "public",
                              ) -> list[str] | None:
        """The primary key's columns of ``schema.table``, in order; None when it has none."""
        rows = self.get_records(
            "SELECT kcu.column_name FROM information_schema.table_constraints tco "
            "JOIN information_schema.key_column_usage kcu "
            "ON kcu.constraint_name = tco.constraint_name "
            "AND kcu.constraint_schema = tco.constraint_schema "
            "WHERE tco.constraint_type = 'PRIMARY KEY' AND kcu.table_schema = %s "
            "AND kcu.table_name = %s ORDER BY kcu.ordinal_position", (schema, table))
        return [row[0] for row in rows] or None

    def _generate_insert_sql(self, table: str, width: int,
                             target_fields: Sequence[str] | None, replace: bool,
                             **kwargs: Any) -> str:
        replace_index = kwargs.pop("replace_index", None)
        sql = super()._generate_insert_sql(table, width, target_fields, False, **kwargs)
        if not replace:
            return sql
        if not target_fields:
            raise ValueError("PostgreSQL ON CONFLICT upsert syntax requires column names")
        if not replace_index:
            raise ValueError("PostgreSQL ON CONFLICT upsert syntax requires an unique index")
        index = [replace_index] if isinstance(replace_index, str) else list(replace_index)
        updates = [f"{col} = excluded.{col}" for col in target_fields if col not in index]
        action = f"UPDATE SET {', '.join(updates)}" if updates else "NOTHING"
        return f"{sql} ON CONFLICT ({', '.join(index)}) DO {action}"
