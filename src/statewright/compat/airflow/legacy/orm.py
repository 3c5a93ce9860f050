"""``airflow.settings.Session`` and the model objects Airflow 2 DAG code writes through it.

In Airflow 2 a task could open the metadata database (``session = Session()``) and add rows:
``models.Connection()`` (with ``set_password``), ``models.Variable(key, val)``,
``models.Pool()``. Airflow 3 forbids direct database access from tasks; statewright's tasks hold
no database session either (they reach the database through their worker). Here a ``Session``
keeps what is added and, on ``commit()``, stores variables through the task's worker as
``Variable.set`` does; connections and pools cannot be created from DAG code (the error says
which command does it), and ``query()``/``execute()`` on Airflow's tables fail with a clear
error, as Airflow 3 refuses them.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from statewright.core.errors import StatewrightError
from statewright.sdk import secrets
from statewright.sdk.connection import Connection as _Connection
from statewright.sdk.variables import Variable as _Variable

__all__ = ["Connection", "MetadataAccessRefused", "Pool", "Session"]


class MetadataAccessRefused(StatewrightError):
    """DAG code asked for the metadata database in a way statewright does not offer."""


class Connection(_Connection):
    """Airflow 2's ``models.Connection``: the fields, ``set_password`` and ``set_extra``."""

    def set_password(self, value: str | None) -> None:
        self.password = value

    def set_extra(self, value: str | None) -> None:
        self.extra = value
        self._check_extra()


class Pool:
    """Airflow 2's ``models.Pool`` row: ``pool``, ``slots``, ``description``."""

    def __init__(self, pool: str | None = None, slots: int = 0, description: str = "",
                 include_deferred: bool = False) -> None:
        self.pool = pool
        self.slots = slots
        self.description = description
        self.include_deferred = include_deferred

    def __repr__(self) -> str:
        return f"Pool(pool={self.pool!r}, slots={self.slots!r})"


class Session:
    """``airflow.settings.Session()``: a session that stores what DAG code adds on commit."""

    def __init__(self, **_: Any) -> None:
        self._pending: list[Any] = []

    @classmethod
    def remove(cls) -> None:
        """Airflow's ``scoped_session.remove()``: nothing is held between sessions here."""

    def add(self, instance: Any, _warn: bool = True) -> None:
        if not isinstance(instance, _Connection | _Variable | Pool):
            raise MetadataAccessRefused(
                f"Session.add({type(instance).__name__}): statewright's tasks do not write "
                "Airflow's metadata tables; variables, connections and pools only")
        self._pending.append(instance)

    def add_all(self, instances: Any) -> None:
        for instance in instances:
            self.add(instance)

    merge = add

    def commit(self) -> None:
        pending, self._pending = self._pending, []
        for instance in pending:
            _store(instance)

    def flush(self, objects: Any = None) -> None:
        self.commit()

    def rollback(self) -> None:
        self._pending.clear()

    def close(self) -> None:
        self._pending.clear()

    def query(self, *entities: Any, **_: Any) -> Any:
        raise MetadataAccessRefused(
            "Direct database access via the ORM is not offered: statewright's tasks hold no "
            "database session (Airflow 3 refuses it too). Read connections and variables with "
            "BaseHook.get_connection / Variable.get, runs and task instances through the REST "
            "API or the task's context")

    execute = query
    delete = query

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.commit()
        self.close()


def _store(instance: Any) -> None:
    if isinstance(instance, _Variable):
        if not instance.key:
            raise MetadataAccessRefused("Session.commit(): a Variable without a key")
        value = "" if instance.val is None else str(instance.val)
        secrets.set_variable(instance.key, value, instance.description)
    elif isinstance(instance, _Connection):
        raise MetadataAccessRefused(
            f"connection {instance.conn_id!r} cannot be created from DAG code: add it with "
            "`statewright connections add` (or AIRFLOW_CONN_/STATEWRIGHT_CONN_ variables, or "
            "the API)")
    else:
        raise MetadataAccessRefused(
            f"pool {instance.pool!r} cannot be created from DAG code: create it with "
            "`statewright pools import` (or the API)")
