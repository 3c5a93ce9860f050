"""``SqliteHook``: ``DbApiHook`` on a ``sqlite`` connection (Python's sqlite3).

As Airflow's: ``sqlite_conn_id`` (default ``sqlite_default``); the database file is the
connection's host (``sqlite:////tmp/x.db`` in URI form, or ``{"conn_type": "sqlite", "host":
"/tmp/x.db"}``), ``:memory:`` for a database in memory; ``insert_rows(replace=True)`` is
``INSERT OR REPLACE``.
"""

from __future__ import annotations

from statewright.providers.common.sql.hooks.sql import DbApiHook

__all__ = ["SqliteHook"]


class SqliteHook(DbApiHook):
    conn_name_attr = "sqlite_conn_id"
    default_conn_name = "sqlite_default"
    conn_type = "sqlite"
    conn_types = ("sqlite",)
    hook_name = "Sqlite"
    url_kind = "sqlite"

    @property
    def placeholder(self) -> str:
        return "?"
