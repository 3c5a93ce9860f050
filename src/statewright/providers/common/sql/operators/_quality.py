"""The data-quality operators of Airflow's common-sql provider.

- ``SQLIntervalCheckOperator``: metrics of ``table`` on the run's ``ds`` against ``days_back``
  days before; each ratio (``max_over_min`` or ``relative_diff``) must stay under its threshold.
- ``SQLColumnCheckOperator``: per column, ``null_check``, ``distinct_check``, ``unique_check``,
  ``min``, ``max`` compared with ``equal_to`` / ``greater_than`` / ``geq_to`` / ``less_than`` /
  ``leq_to`` (with an optional ``tolerance``).
- ``SQLTableCheckOperator``: named boolean SQL expressions that every row must satisfy.

Each records ``result`` and ``success`` in its mapping, as Airflow's do, and fails the try with
the failed checks named.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, ClassVar

from statewright.providers.common.sql.operators._base import (
    BaseSQLOperator,
    SQLCheckFailed,
    parse_boolean,
)

__all__ = ["SQLColumnCheckOperator", "SQLIntervalCheckOperator", "SQLTableCheckOperator"]

log = logging.getLogger("statewright.task")

_RATIOS = {
    "max_over_min": lambda cur, ref: max(cur, ref) / min(cur, ref),
    "relative_diff": lambda cur, ref: abs(cur - ref) / ref,
}
_COLUMN_CHECKS = {
    "null_check": "SUM(CASE WHEN {column} IS NULL THEN 1 ELSE 0 END)",
    "distinct_check": "COUNT(DISTINCT({column}))",
    "unique_check": "COUNT({column}) - COUNT(DISTINCT({column}))",
    "min": "MIN({column})",
    "max": "MAX({column})",
}
_COMPARISONS = ("greater_than", "geq_to", "less_than", "leq_to", "equal_to")


class SQLIntervalCheckOperator(BaseSQLOperator):
    template_fields: ClassVar[Sequence[str]] = ("sql1", "sql2", "conn_id")
    ratio_formulas: ClassVar[dict[str, Any]] = _RATIOS

    def __init__(self, *, table: str, metrics_thresholds: dict[str, float],
                 date_filter_column: str | None = "ds", days_back: int = -7,
                 ratio_formula: str | None = "max_over_min", ignore_zero: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if ratio_formula not in _RATIOS:
            raise ValueError(f"Invalid diff_method: {ratio_formula}. Supported diff methods "
                             f"are: {', '.join(_RATIOS)}")
        self.ratio_formula = ratio_formula
        self.ignore_zero = ignore_zero
        self.table = table
        self.metrics_thresholds = metrics_thresholds
        self.metrics_sorted = sorted(metrics_thresholds)
        self.date_filter_column = date_filter_column
        self.days_back = -abs(days_back)
        select = f"SELECT {', '.join(self.metrics_sorted)} FROM {table} WHERE {date_filter_column}="
        self.sql1 = select + "'{{ ds }}'"
        self.sql2 = select + "'{{ macros.ds_add(ds, " + str(self.days_back) + ") }}'"

    def execute(self, context: Any) -> None:
        hook = self.get_db_hook()
        log.info("Using ratio formula: %s", self.ratio_formula)
        reference = hook.get_first(self.sql2)
        if not reference:
            raise SQLCheckFailed(f"The following query returned zero rows: {self.sql2}")
        current = hook.get_first(self.sql1)
        if not current:
            raise SQLCheckFailed(f"The following query returned zero rows: {self.sql1}")
        ratios = self._ratios(dict(zip(self.metrics_sorted, current, strict=False)),
                              dict(zip(self.metrics_sorted, reference, strict=False)))
        failed = [m for m, ratio in ratios.items()
                  if ratio is not None and not ratio < self.metrics_thresholds[m]]
        for metric, ratio in ratios.items():
            log.info("'%s' check: ratio %s, threshold %s", metric, ratio,
                     self.metrics_thresholds[metric])
        if failed:
            raise SQLCheckFailed(
                f"The following tests have failed:\n {', '.join(sorted(failed))}")
        log.info("All tests have passed")

    def _ratios(self, current: dict[str, Any], reference: dict[str, Any]
                ) -> dict[str, float | None]:
        formula = _RATIOS[str(self.ratio_formula)]
        ratios: dict[str, float | None] = {}
        for metric in self.metrics_sorted:
            cur, ref = current[metric], reference[metric]
            if cur is None or ref is None or ((cur == 0 or ref == 0) and self.ignore_zero):
                ratios[metric] = None
            else:
                ratios[metric] = float(formula(float(cur), float(ref)))
        return ratios


class SQLColumnCheckOperator(BaseSQLOperator):
    template_fields: ClassVar[Sequence[str]] = ("partition_clause", "table", "sql", "conn_id")
    sql_check_template = ("SELECT '{column}' AS col_name, '{check}' AS check_type, "
                          "{column}_{check} AS check_result FROM (SELECT {sql} AS "
                          "{column}_{check} FROM {table} {partition}) AS sq")

    def __init__(self, *, table: str, column_mapping: dict[str, dict[str, Any]],
                 partition_clause: str | None = None, accept_none: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for column, checks in column_mapping.items():
            for check, values in checks.items():
                _validate_column_check(column, check, values)
        self.table = table
        self.column_mapping = column_mapping
        self.partition_clause = partition_clause
        self.accept_none = accept_none
        self.sql = " UNION ALL ".join(self._check_sql(column, check, values)
                                      for column, checks in column_mapping.items()
                                      for check, values in checks.items())

    def _check_sql(self, column: str, check: str, values: dict[str, Any]) -> str:
        clauses = [c for c in (self.partition_clause, values.get("partition_clause")) if c]
        partition = "WHERE " + " AND ".join(f"({c})" for c in clauses) if clauses else ""
        return self.sql_check_template.format(
            column=column, check=check, table=self.table, partition=partition,
            sql=_COLUMN_CHECKS[check].format(column=column))

    def execute(self, context: Any) -> None:
        records = self.get_db_hook().get_records(self.sql)
        if not records:
            raise SQLCheckFailed(f"The following query returned zero rows: {self.sql}")
        failed: list[str] = []
        for column, check, result in records:
            values = self.column_mapping[column][check]
            if result is None and self.accept_none:
                result = 0
            values["result"] = result
            values["success"] = result is not None and _matches(values, result)
            if not values["success"]:
                failed.append(f"Column: {column}\n\tCheck: {check},\n\tCheck Values: {values}\n")
        if failed:
            raise SQLCheckFailed(f"Test failed.\nResults:\n{records!s}\n"
                                 f"The following tests have failed:\n{''.join(failed)}")
        log.info("All tests have passed")


def _validate_column_check(column: str, check: str, values: Any) -> None:
    if check not in _COLUMN_CHECKS:
        raise ValueError(f"Invalid column check: {check} (column {column!r}); valid checks are "
                         f"{', '.join(_COLUMN_CHECKS)}")
    if not isinstance(values, dict) or not any(k in values for k in _COMPARISONS):
        raise ValueError(f"column {column!r}, check {check!r}: give one of "
                         f"{', '.join(_COMPARISONS)}")
    if "equal_to" in values and any(k in values for k in _COMPARISONS[:4]):
        raise ValueError(f"column {column!r}, check {check!r}: equal_to cannot be combined "
                         "with the other comparisons")


def _matches(values: dict[str, Any], result: Any) -> bool:
    tolerance = values.get("tolerance")
    low = 1 - tolerance if tolerance is not None else 1
    high = 1 + tolerance if tolerance is not None else 1
    if "equal_to" in values:
        expected = values["equal_to"]
        if tolerance is None:
            return bool(result == expected)
        return bool(expected * low <= result <= expected * high)
    ok = True
    if "geq_to" in values:
        ok = result >= values["geq_to"] * low
    elif "greater_than" in values:
        ok = result > values["greater_than"] * low
    if "leq_to" in values:
        ok = ok and result <= values["leq_to"] * high
    elif "less_than" in values:
        ok = ok and result < values["less_than"] * high
    return bool(ok)


class SQLTableCheckOperator(BaseSQLOperator):
    template_fields: ClassVar[Sequence[str]] = ("partition_clause", "table", "sql", "conn_id")
    sql_check_template = ("SELECT '{check_name}' AS check_name, MIN({check_name}) AS "
                          "check_result FROM (SELECT CASE WHEN {check_statement} THEN 1 ELSE 0 "
                          "END AS {check_name} FROM {table} {partition}) AS sq")

    def __init__(self, *, table: str, checks: dict[str, dict[str, Any]],
                 partition_clause: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for name, check in checks.items():
            if not isinstance(check, dict) or "check_statement" not in check:
                raise ValueError(f"table check {name!r} needs a check_statement")
        self.table = table
        self.checks = checks
        self.partition_clause = partition_clause
        self.sql = " UNION ALL ".join(self._check_sql(name, check)
                                      for name, check in checks.items())

    def _check_sql(self, name: str, check: dict[str, Any]) -> str:
        clauses = [c for c in (self.partition_clause, check.get("partition_clause")) if c]
        partition = "WHERE " + " AND ".join(f"({c})" for c in clauses) if clauses else ""
        return self.sql_check_template.format(check_name=name, table=self.table,
                                              check_statement=check["check_statement"],
                                              partition=partition)

    def execute(self, context: Any) -> None:
        records = self.get_db_hook().get_records(self.sql)
        if not records:
            raise SQLCheckFailed(f"The following query returned zero rows: {self.sql}")
        for name, result in records:
            self.checks[name]["success"] = parse_boolean(str(result)) is True
        failed = [name for name, check in self.checks.items() if not check.get("success")]
        if failed:
            raise SQLCheckFailed(f"Test failed.\nQuery:\n{self.sql}\nResults:\n{records!s}\n"
                                 f"The following tests have failed:\n{', '.join(failed)}")
        log.info("All tests have passed")
