"""The SQL operators of Airflow's common-sql provider.

- ``SQLExecuteQueryOperator``: run ``sql`` (a string, a list, or a ``.sql`` file) with
  ``parameters``; the rows of the last statement go to XCom (lists of values).
- ``SQLCheckOperator``: fail unless the first row of ``sql`` exists and every value is truthy.
- ``SQLValueCheckOperator``: fail unless the first row equals ``pass_value`` (numbers within
  ``tolerance``, a fraction: 0.1 is ±10%).
- ``SQLThresholdCheckOperator``: fail unless the first value of ``sql`` lies between
  ``min_threshold`` and ``max_threshold`` (numbers, or SQL returning one value).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from statewright.providers.common.sql.hooks.sql import DbApiHook, fetch_all_handler
from statewright.sdk.baseoperator import BaseOperator

__all__ = [
    "BaseSQLOperator",
    "SQLCheckFailed",
    "SQLCheckOperator",
    "SQLExecuteQueryOperator",
    "SQLThresholdCheckOperator",
    "SQLValueCheckOperator",
]

log = logging.getLogger("statewright.task")


class SQLCheckFailed(RuntimeError):
    """A data check failed: the try fails (retries apply, as in Airflow)."""


class BaseSQLOperator(BaseOperator):
    """Holds ``conn_id``, ``database`` and ``hook_params``; ``get_db_hook()`` makes the hook."""

    template_fields: ClassVar[Sequence[str]] = ("conn_id", "database", "hook_params")
    template_ext: ClassVar[Sequence[str]] = (".sql",)

    def __init__(self, *, conn_id: str | None = None, database: str | None = None,
                 hook_params: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not conn_id:
            raise ValueError(f"{type(self).__name__} {self.task_id!r}: conn_id is required")
        self.conn_id = conn_id
        self.database = database
        self.hook_params = dict(hook_params or {})

    def get_db_hook(self) -> DbApiHook:
        params = dict(self.hook_params)
        if self.database:
            params["schema"] = self.database
        return DbApiHook(conn_id=self.conn_id, **params)

    def _sql_text(self, sql: Any) -> Any:
        """``sql`` itself, or the content of the ``.sql`` file it names (next to the DAG file,
        or under the DAG's ``template_searchpath``)."""
        if not (isinstance(sql, str) and sql.strip().endswith(".sql") and "\n" not in sql):
            return sql
        path = Path(sql.strip())
        for folder in self._search_folders():
            candidate = path if path.is_absolute() else folder / path
            if candidate.is_file():
                return candidate.read_text(encoding="utf-8")
        raise FileNotFoundError(f"{type(self).__name__} {self.task_id!r}: SQL file {sql!r} "
                                "not found next to the DAG file or in template_searchpath")

    def _search_folders(self) -> list[Path]:
        dag = getattr(self, "dag", None)
        folders = [Path(p) for p in _as_list(getattr(dag, "template_searchpath", None))]
        fileloc = getattr(dag, "fileloc", None)
        if fileloc:
            folders.append(Path(fileloc).parent)
        return folders or [Path.cwd()]


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
        result = _plain(output)
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
    template_fields: ClassVar[Sequence[str]] = ("sql", "pass_value", "conn_id")

    def __init__(self, *, sql: str, pass_value: Any, tolerance: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sql = sql
        self.pass_value = str(pass_value)
        tol = _to_float(tolerance) if tolerance is not None else None
        self.tol = tol if isinstance(tol, float) else None
        self.has_tolerance = self.tol is not None

    def execute(self, context: Any) -> None:
        sql = self._sql_text(self.sql)
        log.info("Executing SQL check: %s", sql)
        records = self.get_db_hook().get_first(sql)
        if not records:
            raise SQLCheckFailed(f"The following query returned zero rows: {sql}")
        expected = _to_float(self.pass_value)
        if isinstance(expected, float):
            tests = self._numeric_matches([_to_float(r) for r in records], expected)
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
        return {k: _plain(v) for k, v in meta.items()}

    def _threshold(self, hook: DbApiHook, value: Any) -> Any:
        number = _to_float(value)
        if isinstance(number, float):
            return number
        row = hook.get_first(self._sql_text(str(value)))
        if not row:
            raise SQLCheckFailed(f"The threshold query returned zero rows: {value}")
        return row[0]


def _to_float(value: Any) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _plain(value: Any) -> Any:
    """Rows as lists of JSON-friendly values (decimals as floats, dates as ISO text)."""
    import datetime as dt
    import decimal

    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value
