"""``SqlSensor``: wait until a query's first cell says so (Airflow's common-sql sensor).

Each poke runs ``sql`` with ``parameters``, through the hook of the connection's type. No row:
not yet (or a failure with ``fail_on_empty``). Otherwise ``selector(first row)`` (the first cell
by default) decides: ``failure(value)`` true fails the task; ``success(value)`` decides when
given; else the value's truth.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, ClassVar

from statewright.providers.common.sql.operators._base import SQLCheckFailed, db_hook
from statewright.sdk.sensors.base import BaseSensor

__all__ = ["SqlSensor"]

log = logging.getLogger("statewright.task")


class SqlSensor(BaseSensor):
    template_fields: ClassVar[Sequence[str]] = ("sql", "hook_params", "parameters", "conn_id")
    template_ext: ClassVar[Sequence[str]] = (".hql", ".sql")

    def __init__(self, *, conn_id: str, sql: str,
                 parameters: Sequence[Any] | dict[str, Any] | None = None,
                 success: Callable[[Any], Any] | None = None,
                 failure: Callable[[Any], Any] | None = None,
                 selector: Callable[[tuple[Any, ...]], Any] = itemgetter(0),
                 fail_on_empty: bool = False, hook_params: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for name, fn in (("success", success), ("failure", failure), ("selector", selector)):
            if fn is not None and not callable(fn):
                raise ValueError(f"SqlSensor {self.task_id!r}: {name} must be a callable, "
                                 f"got {fn!r}")
        self.conn_id = conn_id
        self.sql = sql
        self.parameters = parameters
        self.success = success
        self.failure = failure
        self.selector = selector
        self.fail_on_empty = fail_on_empty
        self.hook_params = dict(hook_params or {})

    def poke(self, context: Any) -> bool:
        hook = db_hook(self.conn_id, self.hook_params)
        log.info("Poking: %s (with parameters %s)", self.sql, self.parameters)
        records = hook.get_records(self.sql, self.parameters)
        if not records:
            if self.fail_on_empty:
                raise SQLCheckFailed("No rows returned, raising as per fail_on_empty flag")
            return False
        value = self.selector(records[0])
        if self.failure is not None and self.failure(value):
            raise SQLCheckFailed(f"Failure criteria met. self.failure({value}) returned True")
        if self.success is not None:
            return bool(self.success(value))
        return bool(value)
