"""``task_state_store`` and ``asset_state_store``: small durable state a task keeps by key.

A task asks for them by name, like ``ti``::

    @task(retries=2)
    def run_job(task_state_store=None, ti=None):
        job_id = task_state_store.get("job_id")
        if job_id is None:
            job_id = submit()
            task_state_store.set("job_id", job_id, retention=NEVER_EXPIRE)
        return poll(job_id)

``task_state_store`` is the state of this task instance (its own per map index);
``asset_state_store[asset]`` is the state of an asset, shared by every DAG that reads or writes
it. Values are JSON (at most :data:`~statewright.core.task_state.MAX_VALUE_BYTES` bytes each).
The task's process holds no database session: reads and writes go to the supervising worker
through the backend installed for the try (:func:`install_backend`), which fences writes by the
try number. ``aget``/``aset``/``adelete`` are the same calls for ``async`` tasks.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Protocol

from statewright.core.errors import ConfigurationError
from statewright.core.task_state import (
    NEVER_EXPIRE,
    Retention,
    StaleTryWrite,
    TaskStateError,
    encode_value,
    retention_of,
    validate_key,
)

__all__ = [
    "NEVER_EXPIRE",
    "AssetState",
    "AssetStateStore",
    "Retention",
    "StaleTryWrite",
    "StateBackend",
    "TaskStateError",
    "TaskStateStore",
    "install_backend",
    "installed_backend",
    "state_context",
]


class StateBackend(Protocol):
    """Where a task's state is read and written (the worker hands one in).

    ``scope`` is ``("task", dag_id, run_id, task_id, map_index, try_number)`` or
    ``("asset", asset_name, dag_id, run_id, task_id, map_index, try_number)``; values travel as
    JSON text. ``get`` returns ``(found, text)``.
    """

    def get(self, scope: tuple[Any, ...], key: str) -> tuple[bool, str | None]: ...

    def put(self, scope: tuple[Any, ...], key: str, text: str | None,
            retention: str | None) -> None: ...


_backend: StateBackend | None = None
_lock = threading.Lock()


def install_backend(backend: StateBackend | None) -> StateBackend | None:
    """Use ``backend`` in this process; returns the one it replaces."""
    global _backend
    with _lock:
        previous, _backend = _backend, backend
    return previous


def installed_backend() -> StateBackend:
    backend = _backend
    if backend is None:
        raise ConfigurationError(
            "task state is kept by the worker that runs the task: task_state_store and "
            "asset_state_store work inside a running task (a DAG run, dag.test(), tasks test)")
    return backend


class _KeyValueState:
    """get/set/delete and their async forms over one scope."""

    _scope: tuple[Any, ...]
    _retention_allowed = True

    def get(self, key: str, default: Any = None) -> Any:
        found, text = installed_backend().get(self._scope, validate_key(key))
        return json.loads(text) if found and text is not None else default

    def set(self, key: str, value: Any, retention: Any = None) -> None:
        key = validate_key(key)
        if retention is not None and not self._retention_allowed:
            raise TaskStateError(f"asset state {key!r}: an asset's state has no retention (it "
                                 "is kept until deleted)")
        level = retention_of(retention).value if self._retention_allowed else None
        installed_backend().put(self._scope, key, encode_value(key, value), level)

    def delete(self, key: str) -> None:
        installed_backend().put(self._scope, validate_key(key), None, None)

    async def aget(self, key: str, default: Any = None) -> Any:
        return self.get(key, default)

    async def aset(self, key: str, value: Any, retention: Any = None) -> None:
        self.set(key, value, retention)

    async def adelete(self, key: str) -> None:
        self.delete(key)


class TaskStateStore(_KeyValueState):
    """The state of one task instance (one map index), kept across its tries by retention."""

    def __init__(self, dag_id: str, run_id: str, task_id: str, map_index: int,
                 try_number: int) -> None:
        self._scope = ("task", dag_id, run_id, task_id, map_index, try_number)

    def __repr__(self) -> str:
        _, dag_id, run_id, task_id, map_index, try_number = self._scope
        where = f"{dag_id}.{task_id}" + (f"[{map_index}]" if map_index >= 0 else "")
        return f"<task state of {where} run {run_id} try {try_number}>"


class AssetState(_KeyValueState):
    """The state of one asset, shared by its producers and consumers."""

    _retention_allowed = False

    def __init__(self, asset_name: str, writer: tuple[Any, ...]) -> None:
        self.asset_name = asset_name
        self._scope = ("asset", asset_name, *writer)

    def __repr__(self) -> str:
        return f"<asset state of {self.asset_name!r}>"


class AssetStateStore:
    """``asset_state_store[asset]``: an asset (or its name or URI) → its :class:`AssetState`."""

    def __init__(self, writer: tuple[Any, ...]) -> None:
        self._writer = writer

    def __getitem__(self, asset: Any) -> AssetState:
        name = getattr(asset, "name", None) or getattr(asset, "uri", None) or asset
        if not isinstance(name, str) or not name:
            raise TaskStateError(f"asset_state_store[...] takes an Asset or its name, got "
                                 f"{asset!r}")
        return AssetState(name, self._writer)

    def __repr__(self) -> str:
        return "<asset state store>"


def state_context(dag_id: str, run_id: str, task_id: str, map_index: int,
                  try_number: int) -> dict[str, Any]:
    """The context entries of a try: ``task_state_store`` and ``asset_state_store``."""
    writer = (dag_id, run_id, task_id, map_index, try_number)
    return {"task_state_store": TaskStateStore(*writer),
            "asset_state_store": AssetStateStore(writer)}

