"""``PostgresOperator``: Airflow 2's, removed from the postgres provider in favour of
``SQLExecuteQueryOperator``; here it is that operator with ``postgres_conn_id``, ``database``
and ``runtime_parameters`` (set for the statements' session, as libpq ``-c`` options)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from statewright.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from statewright.providers.postgres.hooks.postgres import PostgresHook

__all__ = ["PostgresOperator"]


class PostgresOperator(SQLExecuteQueryOperator):
    template_fields: ClassVar[Sequence[str]] = ("sql", "parameters", "conn_id", "database",
                                                "hook_params")
    hook_class = PostgresHook

    def __init__(self, *, postgres_conn_id: str = PostgresHook.default_conn_name,
                 database: str | None = None,
                 runtime_parameters: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        if runtime_parameters:
            hook_params = dict(kwargs.pop("hook_params", None) or {})
            hook_params["options"] = " ".join(
                f"-c {name}={_escape(value)}" for name, value in runtime_parameters.items())
            kwargs["hook_params"] = hook_params
        super().__init__(conn_id=postgres_conn_id, database=database, **kwargs)
        self.postgres_conn_id = postgres_conn_id
        self.runtime_parameters = dict(runtime_parameters or {})


def _escape(value: Any) -> str:
    """A value for libpq's options string: spaces and backslashes escaped with a backslash."""
    return str(value).replace("\\", "\\\\").replace(" ", "\\ ")
