"""The SQL operators of Airflow's common-sql provider.

- ``SQLExecuteQueryOperator``: run ``sql`` (a string, a list, or a ``.sql`` file) with
  ``parameters``; the rows of the last statement go to XCom as Airflow's do: tuples of the
  driver's values (``Decimal``, ``datetime`` …; XCom keeps their types).
- ``SQLCheckOperator``: fail unless the first row of ``sql`` exists and every value is truthy.
- ``SQLValueCheckOperator``: fail unless the first row equals ``pass_value`` (numbers within
  ``tolerance``, a fraction: 0.1 is ±10%).
- ``SQLThresholdCheckOperator``: fail unless the first value of ``sql`` lies between
  ``min_threshold`` and ``max_threshold`` (numbers, or SQL returning one value).
- ``SQLIntervalCheckOperator``, ``SQLColumnCheckOperator``, ``SQLTableCheckOperator``: data
  quality checks (in ``_quality``).
- ``BranchSQLOperator``: follow ``follow_task_ids_if_true`` or ``..._if_false`` by the truth of
  the first cell of ``sql``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

from statewright.providers.common.sql.hooks.handlers import fetch_all_handler
from statewright.providers.common.sql.hooks.sql import DbApiHook
from statewright.providers.common.sql.operators._base import (
    BaseSQLOperator,
    SQLCheckFailed,
    parse_boolean,
    plain,
    to_float,
)
from statewright.providers.common.sql.operators._quality import (
    SQLColumnCheckOperator,
    SQLIntervalCheckOperator,
    SQLTableCheckOperator,
)
from statewright.sdk.branch import BaseBranchOperator

__all__ = [
    "BaseSQLOperator",
    "BranchSQLOperator",
    "SQLCheckFailed",
    "SQLCheckOperator",
    "SQLColumnCheckOperator",
    "SQLExecuteQueryOperator",
    "SQLIntervalCheckOperator",
    "SQLTableCheckOperator",
    "SQLThresholdCheckOperator",
    "SQLValueCheckOperator",
]

log = logging.getLogger("statewright.task")


class SQLExecuteQueryOperator(BaseSQLOperator):
    template_fields: ClassVar[Sequence[str]] = ("sql", "parameters", "conn_id", "database",
                                                "hook_params")

    def __init__(self, *, sql: str | list[str], autocommit: bool = False,
                 parameters: Sequence[Any] | dict[str, Any] | None = None,
                 handler: Callable[[Any], Any] = fetch_all_handler,
                 split_statements: bool | None = None, return_last: bool = True,
                 show_return_value_in_logs: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sql = sql
        self.autocommit = autocommit
        self.parameters = parameters
        self.handler = handler
        self.split_statements = split_statements
        self.return_last = return_last
        self.show_return_value_in_logs = show_return_value_in_logs

    def execute(self, context: Any) -> Any:
        sql = self._sql_text(self.sql)
        hook = self.get_db_hook()
        output = hook.run(sql, autocommit=self.autocommit, parameters=self.parameters,
                          handler=self.handler if self.do_xcom_push else None,
                          split_statements=bool(self.split_statements),
                          return_last=self.return_last)
        if not self.do_xcom_push:
            return None
        result = output
        if self.show_return_value_in_logs:
            log.info("Return value: %s", result)
        return result


class SQLCheckOperator(BaseSQLOperator):
    template_fields: ClassVar[Sequence[str]] = ("sql", "parameters", "conn_id")

    def __init__(self, *, sql: str, parameters: Sequence[Any] | dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sql = sql
        self.parameters = parameters

    def execute(self, context: Any) -> None:
        sql = self._sql_text(self.sql)
        log.info("Executing SQL check: %s", sql)
        records = self.get_db_hook().get_first(sql, self.parameters)
        log.info("Record: %s", records)
        if not records:
            raise SQLCheckFailed(f"The following query returned zero rows: {sql}")
        if not all(records):
            raise SQLCheckFailed(f"Test failed.\nQuery:\n{sql}\nResults:\n{records!s}")
        log.info("Success.")


class SQLValueCheckOperator(BaseSQLOperator):
    template_fields: ClassVar[Sequence[str]] = ("sql", "pass_value", "conn_id", "parameters")

    def __init__(self, *, sql: str, pass_value: Any, tolerance: Any = None,
                 parameters: Sequence[Any] | dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sql = sql
        self.parameters = parameters
        self.pass_value = str(pass_value)
        tol = to_float(tolerance) if tolerance is not None else None
        self.tol = tol if isinstance(tol, float) else None
        self.has_tolerance = self.tol is not None

    def execute(self, context: Any) -> None:
        sql = self._sql_text(self.sql)
        log.info("Executing SQL check: %s", sql)
        records = self.get_db_hook().get_first(sql, self.parameters)
        if not records:
            raise SQLCheckFailed(f"The following query returned zero rows: {sql}")
        expected = to_float(self.pass_value)
        if isinstance(expected, float):
            tests = self._numeric_matches([to_float(r) for r in records], expected)
        else:
            tests = [str(r) == self.pass_value for r in records]
        if not all(tests):
            tolerance = f"{self.tol * 100}%" if self.tol is not None else None
            raise SQLCheckFailed(
                f"Test failed.\nPass value:{self.pass_value}\nTolerance:{tolerance}\n"
                f"Query:\n{sql}\nResults:\n{records!s}")

    def _numeric_matches(self, records: list[Any], expected: float) -> list[bool]:
        if not all(isinstance(r, float) for r in records):
            return [False]
        if self.tol is not None:
            low, high = expected * (1 - self.tol), expected * (1 + self.tol)
            return [min(low, high) <= r <= max(low, high) for r in records]
        return [r == expected for r in records]


class SQLThresholdCheckOperator(BaseSQLOperator):
    template_fields: ClassVar[Sequence[str]] = ("sql", "min_threshold", "max_threshold",
                                                "conn_id")

    def __init__(self, *, sql: str, min_threshold: Any, max_threshold: Any,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sql = sql
        self.min_threshold = min_threshold
        self.max_threshold = max_threshold

    def execute(self, context: Any) -> dict[str, Any]:
        hook = self.get_db_hook()
        sql = self._sql_text(self.sql)
        first = hook.get_first(sql)
        if not first:
            raise SQLCheckFailed(f"The following query returned zero rows: {sql}")
        result = first[0]
        lower = self._threshold(hook, self.min_threshold)
        upper = self._threshold(hook, self.max_threshold)
        meta = {"result": result, "task_id": self.task_id, "min_threshold": lower,
                "max_threshold": upper, "within_threshold": lower <= result <= upper}
        if not meta["within_threshold"]:
            raise SQLCheckFailed(
                f'Threshold Check: "{self.task_id}" failed.\nResult: {result}\n'
                f"Min threshold: {lower}\nMax threshold: {upper}\nSQL: {sql}")
        log.info("Test %s successful: %s", self.task_id, meta)
        return {k: plain(v) for k, v in meta.items()}

    def _threshold(self, hook: DbApiHook, value: Any) -> Any:
        number = to_float(value)
        if isinstance(number, float):
            return number
        row = hook.get_first(self._sql_text(str(value)))
        if not row:
            raise SQLCheckFailed(f"The threshold query returned zero rows: {value}")
        return row[0]


class BranchSQLOperator(BaseSQLOperator, BaseBranchOperator):
    """Follow ``follow_task_ids_if_true`` when the first cell of ``sql`` is true (a boolean, a
    non-zero integer, or text such as ``true``/``yes``/``1``), else
    ``follow_task_ids_if_false``; the other direct downstream tasks are skipped."""

    template_fields: ClassVar[Sequence[str]] = ("sql", "parameters", "conn_id")
    template_ext: ClassVar[Sequence[str]] = (".sql",)

    def __init__(self, *, sql: str, follow_task_ids_if_true: str | Iterable[str],
                 follow_task_ids_if_false: str | Iterable[str],
                 parameters: Sequence[Any] | dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sql = sql
        self.parameters = parameters
        self.follow_task_ids_if_true = follow_task_ids_if_true
        self.follow_task_ids_if_false = follow_task_ids_if_false

    def choose_branch(self, context: Any) -> str | Iterable[str] | None:
        sql = self._sql_text(self.sql)
        log.info("Executing: %s (with parameters %s) with connection: %s", sql,
                 self.parameters, self.conn_id)
        record = self.get_db_hook().get_first(sql, self.parameters)
        if not record:
            raise SQLCheckFailed("No rows returned from sql query. Operator expected True or "
                                 "False return value.")
        result = record[0]
        log.info("Query returns %s, type '%s'", result, type(result))
        if isinstance(result, bool | int):
            truth: bool | None = bool(result)
        elif isinstance(result, str):
            truth = parse_boolean(result)
            if truth is None:
                raise SQLCheckFailed(f"Unexpected query return result '{result}' type "
                                     f"'{type(result)}': not a truth value")
        else:
            raise SQLCheckFailed(f"Unexpected query return result '{result}' type "
                                 f"'{type(result)}'")
        return self.follow_task_ids_if_true if truth else self.follow_task_ids_if_false
