"""``BaseHook``: the base of every hook, with Airflow's ``get_connection``.

A hook wraps a client for one kind of external system, made from a connection. Hook classes
declare the connection types they serve (``conn_type``); ``BaseHook.get_hook(conn_id)`` builds
the right one for a connection, once the module defining it has been imported.
"""

from __future__ import annotations

from typing import Any, ClassVar

from statewright.sdk import secrets
from statewright.sdk.connection import Connection
from statewright.sdk.logging_mixin import LoggingMixin

__all__ = ["BaseHook"]

_HOOKS_BY_TYPE: dict[str, type[BaseHook]] = {}


class BaseHook(LoggingMixin):
    _log_config_logger_name: ClassVar[str | None] = "statewright.task.hooks"
    conn_name_attr: ClassVar[str] = "conn_id"
    default_conn_name: ClassVar[str] = "default_conn_id"
    conn_type: ClassVar[str] = ""
    conn_types: ClassVar[tuple[str, ...]] = ()
    """Every connection type the hook serves (``conn_type`` when empty)."""
    hook_name: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "conn_types" not in cls.__dict__ and "conn_type" not in cls.__dict__:
            return  # a subclass serving the same types as its base does not take them over
        for conn_type in cls.conn_types or ((cls.conn_type,) if cls.conn_type else ()):
            _HOOKS_BY_TYPE[conn_type] = cls

    def __init__(self, logger_name: str | None = None) -> None:
        super().__init__()
        self._logger_name = logger_name  # self.log: statewright.task.hooks.<logger_name>

    @classmethod
    def get_connection(cls, conn_id: str) -> Connection:
        """The connection ``conn_id`` (environment, secrets backends, then the database)."""
        return secrets.get_connection(conn_id)

    @classmethod
    def get_hook(cls, conn_id: str, hook_params: dict[str, Any] | None = None) -> BaseHook:
        """The hook for the type of connection ``conn_id``."""
        conn = cls.get_connection(conn_id)
        hook_cls = _HOOKS_BY_TYPE.get(conn.conn_type or "")
        if hook_cls is None:
            known = ", ".join(sorted(_HOOKS_BY_TYPE)) or "none"
            raise ValueError(
                f"connection {conn_id!r} has the type {conn.conn_type!r}, for which no hook is "
                f"loaded (types with a hook: {known}); the SQL hooks live in "
                "statewright.providers.common.sql")
        params = dict(hook_params or {})
        params[hook_cls.conn_name_attr] = conn_id
        return hook_cls(**params)

    def get_conn(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement get_conn()")

    def test_connection(self) -> tuple[bool, str]:
        return False, f"{type(self).__name__} cannot test its connection"


def hook_for_type(conn_type: str | None) -> type[BaseHook] | None:
    return _HOOKS_BY_TYPE.get(conn_type or "")
