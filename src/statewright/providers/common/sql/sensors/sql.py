"""``SqlSensor``: wait until a query's first cell says so (Airflow's common-sql sensor).

Each poke runs ``sql`` with ``parameters``. No row: not yet (or a failure with
``fail_on_empty``). Otherwise the first cell of the first row decides: ``failure(cell)`` true
fails the task; ``success(cell)`` decides when given; else the cell's truth.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from statewright.providers.common.sql.hooks.sql import DbApiHook
from statewright.sdk.sensors.base import BaseSensor

__all__ = ["SqlSensor"]

log = logging.getLogger("statewright.task")


class SqlSensor(BaseSensor):
    template_fields: ClassVar[Sequence[str]] = ("sql", "hook_params", "parameters")
    template_ext: ClassVar[Sequence[str]] = (".sql",)

    def __init__(self, *, conn_id: str, sql: str,
                 parameters: Sequence[Any] | dict[str, Any] | None = None,
                 success: Callable[[Any], Any] | None = None,
                 failure: Callable[[Any], Any] | None = None, fail_on_empty: bool = False,
                 hook_params: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for name, fn in (("success", success), ("failure", failure)):
            if fn is not None and not callable(fn):
                raise ValueError(f"SqlSensor {self.task_id!r}: {name} must be a callable, "
                                 f"got {fn!r}")
        self.conn_id = conn_id
        self.sql = sql
        self.parameters = parameters
        self.success = success
        self.failure = failure
        self.fail_on_empty = fail_on_empty
        self.hook_params = dict(hook_params or {})

    def poke(self, context: Any) -> bool:
        hook = DbApiHook(conn_id=self.conn_id, **self.hook_params)
        log.info("Poking: %s (with parameters %s)", self.sql, self.parameters)
        records = hook.get_records(self.sql, self.parameters)
        if not records:
            if self.fail_on_empty:
                raise RuntimeError("No rows returned, raising as per fail_on_empty flag")
            return False
        first_cell = records[0][0]
        if self.failure is not None and self.failure(first_cell):
            raise RuntimeError(f"Failure criteria met. self.failure({first_cell}) returned True")
        if self.success is not None:
            return bool(self.success(first_cell))
        return bool(first_cell)
