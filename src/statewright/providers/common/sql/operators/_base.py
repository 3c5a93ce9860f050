"""What the common-sql operators share: ``BaseSQLOperator`` (the connection, the hook, ``.sql``
files) and the conversions of query results."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from statewright.core.errors import StatewrightError
from statewright.providers import load_hook_for
from statewright.providers.common.sql.hooks.sql import DbApiHook
from statewright.sdk.basehook import hook_for_type
from statewright.sdk.baseoperator import BaseOperator

__all__ = ["BaseSQLOperator", "SQLCheckFailed", "db_hook"]


class SQLCheckFailed(StatewrightError, RuntimeError):
    """A data check failed: the try fails (retries apply, as in Airflow); an
    ``AirflowException`` to DAG code."""


class BaseSQLOperator(BaseOperator):
    """Holds ``conn_id``, ``database`` and ``hook_params``; ``get_db_hook()`` makes the hook of
    the connection's type (``PostgresHook`` for a ``postgres`` connection ...)."""

    template_fields: ClassVar[Sequence[str]] = ("conn_id", "database", "hook_params")
    template_ext: ClassVar[Sequence[str]] = (".sql",)
    hook_class: ClassVar[type[DbApiHook] | None] = None
    """The hook every instance uses (the postgres, mysql and sqlite operators set it)."""

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
        return db_hook(self.conn_id, params, self.hook_class)

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


def db_hook(conn_id: str, params: dict[str, Any],
            hook_class: type[DbApiHook] | None = None) -> DbApiHook:
    """The SQL hook of the connection ``conn_id``: ``hook_class``, else the hook of the
    connection's type (``PostgresHook``, ``MySqlHook``, ``SqliteHook``), else ``DbApiHook``."""
    hook_cls = hook_class or DbApiHook
    if hook_class is None:
        conn_type = DbApiHook.get_connection(conn_id).conn_type
        load_hook_for(conn_type)  # PostgresHook for postgres, as Airflow's conn.get_hook()
        found = hook_for_type(conn_type)
        if found is not None and issubclass(found, DbApiHook):
            hook_cls = found
    return hook_cls(**{**params, hook_cls.conn_name_attr: conn_id})


def to_float(value: Any) -> Any:
    """``value`` as a float when it reads as a number, else ``value`` itself."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def plain(value: Any) -> Any:
    """Rows as lists of JSON-friendly values (decimals as numbers, dates as ISO text)."""
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def parse_boolean(value: Any) -> bool | None:
    """Airflow's reading of a SQL result as a truth value: ``true``/``yes``/``on``/``1`` and
    ``false``/``no``/``off``/``0`` (any case); None for anything else."""
    text = str(value).strip().lower()
    if text in ("y", "yes", "t", "true", "on", "1"):
        return True
    if text in ("n", "no", "f", "false", "off", "0"):
        return False
    return None
