"""``MySqlOperator``: Airflow 2's, removed from the mysql provider in favour of
``SQLExecuteQueryOperator``; here it is that operator with ``mysql_conn_id`` and ``database``."""

from __future__ import annotations

from typing import Any

from statewright.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from statewright.providers.mysql.hooks.mysql import MySqlHook

__all__ = ["MySqlOperator"]


class MySqlOperator(SQLExecuteQueryOperator):
    hook_class = MySqlHook

    def __init__(self, *, mysql_conn_id: str = MySqlHook.default_conn_name,
                 database: str | None = None, **kwargs: Any) -> None:
        super().__init__(conn_id=mysql_conn_id, database=database, **kwargs)
        self.mysql_conn_id = mysql_conn_id
