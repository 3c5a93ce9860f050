"""``GenericTransfer``: copy the rows of a query on one connection into a table on another
(any pair of the SQL hooks' connection types).

As Airflow's: ``sql``, ``destination_table``, ``source_conn_id`` / ``destination_conn_id``
(with ``source_hook_params`` / ``destination_hook_params``), ``preoperator`` (SQL run on the
destination first: a string or a list), ``insert_args`` (``target_fields``, ``replace``,
``commit_every`` … of ``insert_rows``). With ``page_size`` the query is read a page at a time
(``paginated_sql_statement_clause``, ``"{} LIMIT {} OFFSET {}"`` by default) until a page comes
back short; the pages are read by the task itself (Airflow defers between pages).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from statewright.providers.common.sql.operators._base import db_hook
from statewright.sdk.baseoperator import BaseOperator

__all__ = ["GenericTransfer"]


class GenericTransfer(BaseOperator):
    template_fields: ClassVar[Sequence[str]] = (
        "source_conn_id", "destination_conn_id", "sql", "destination_table", "preoperator",
        "insert_args")
    template_ext: ClassVar[Sequence[str]] = (".sql", ".hql")

    def __init__(self, *, sql: str, destination_table: str, source_conn_id: str,
                 destination_conn_id: str, source_hook_params: dict[str, Any] | None = None,
                 destination_hook_params: dict[str, Any] | None = None,
                 preoperator: str | list[str] | None = None,
                 insert_args: dict[str, Any] | None = None, page_size: int | None = None,
                 paginated_sql_statement_clause: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if page_size is not None and page_size < 1:
            raise ValueError(f"GenericTransfer {self.task_id!r}: page_size must be at least 1")
        self.sql = sql
        self.destination_table = destination_table
        self.source_conn_id = source_conn_id
        self.destination_conn_id = destination_conn_id
        self.source_hook_params = dict(source_hook_params or {})
        self.destination_hook_params = dict(destination_hook_params or {})
        self.preoperator = preoperator
        self.insert_args = dict(insert_args or {})
        self.page_size = page_size
        self.paginated_sql_statement_clause = (paginated_sql_statement_clause
                                               or "{} LIMIT {} OFFSET {}")

    def execute(self, context: Any) -> int:
        source = db_hook(self.source_conn_id, self.source_hook_params)
        destination = db_hook(self.destination_conn_id, self.destination_hook_params)
        if self.preoperator:
            self.log.info("Running preoperator: %s", self.preoperator)
            destination.run(self.preoperator)
        total = 0
        for rows in self._pages(source):
            self.log.info("Inserting %s rows into %s", len(rows), self.destination_conn_id)
            if rows:
                total += destination.insert_rows(self.destination_table, rows,
                                                 **self.insert_args)
        return total

    def _pages(self, source: Any) -> Any:
        self.log.info("Extracting data from %s: %s", self.source_conn_id, self.sql)
        if self.page_size is None:
            yield source.get_records(self.sql)
            return
        offset = 0
        while True:
            statement = self.paginated_sql_statement_clause.format(
                self.sql.strip().rstrip(";"), self.page_size, offset)
            rows = source.get_records(statement)
            yield rows
            if len(rows) < self.page_size:
                return
            offset += self.page_size
