"""``SqliteOperator``: Airflow 2's, removed from the sqlite provider in favour of
``SQLExecuteQueryOperator``; here it is that operator with ``sqlite_conn_id``."""

from __future__ import annotations

from typing import Any

from statewright.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from statewright.providers.sqlite.hooks.sqlite import SqliteHook

__all__ = ["SqliteOperator"]


class SqliteOperator(SQLExecuteQueryOperator):
    hook_class = SqliteHook

    def __init__(self, *, sqlite_conn_id: str = SqliteHook.default_conn_name,
                 **kwargs: Any) -> None:
        super().__init__(conn_id=sqlite_conn_id, **kwargs)
        self.sqlite_conn_id = sqlite_conn_id
