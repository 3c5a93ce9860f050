"""A task process's lookups of connections and variables, answered by its worker.

The task process holds no database session: its store (:class:`RelayStore`) sends a
:class:`SecretRequest` up the pipe to the supervising worker, which answers from the database
(:func:`answer`) — the same path as the result cache's lookups.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from statewright.sdk.connection import Connection
from statewright.sdk.secrets import EnvironmentVariablesBackend
from statewright.services.secrets.store import DatabaseStore

__all__ = ["RelayStore", "SecretAnswer", "SecretRequest", "answer"]


@dataclass(frozen=True)
class SecretRequest:
    """``op`` is ``get_connection``, ``get_variable`` or ``set_variable``."""

    op: str
    key: str
    value: str | None = None
    description: str | None = None


@dataclass(frozen=True)
class SecretAnswer:
    value: Any = None
    error: str | None = None
    """The worker's error (the task re-raises it with this text)."""


class RelayStore:
    def __init__(self, ask: Callable[[Any], Any]) -> None:
        self.ask = ask
        self._lock = threading.Lock()  # one question at a time on the pipe (tasks with threads)

    def _call(self, request: SecretRequest) -> Any:
        with self._lock:
            reply = self.ask(request)
        if isinstance(reply, BaseException):
            raise reply
        if not isinstance(reply, SecretAnswer):
            raise RuntimeError(f"the worker answered {request.op}({request.key!r}) with "
                               f"{reply!r}")
        if reply.error:
            raise RuntimeError(f"{request.op}({request.key!r}) failed in the worker: "
                               f"{reply.error}")
        return reply.value

    def get_connection(self, conn_id: str) -> Connection | None:
        data = self._call(SecretRequest("get_connection", conn_id))
        return None if data is None else Connection(conn_id=conn_id, **data)

    def get_variable(self, key: str) -> str | None:
        value = self._call(SecretRequest("get_variable", key))
        return None if value is None else str(value)

    def set_variable(self, key: str, value: str, description: str | None) -> None:
        self._call(SecretRequest("set_variable", key, value, description))


def answer(engine: Engine, request: SecretRequest) -> SecretAnswer:
    """The worker's side: its own environment (the executor's connections and variables, which
    a task process forked by an older fork server may lack), then the database."""
    from statewright.services.worker.deferral import current_cipher

    store = DatabaseStore(engine, current_cipher)
    env = EnvironmentVariablesBackend()
    try:
        if request.op == "get_connection":
            conn = env.get_connection(request.key) or store.get_connection(request.key)
            return SecretAnswer(None if conn is None else conn.to_dict())
        if request.op == "get_variable":
            value = env.get_variable(request.key)
            return SecretAnswer(value if value is not None else store.get_variable(request.key))
        if request.op == "set_variable":
            store.set_variable(request.key, request.value or "", request.description)
            return SecretAnswer(None)
    except Exception as exc:
        return SecretAnswer(error=f"{type(exc).__name__}: {exc}")
    return SecretAnswer(error=f"unknown request {request.op!r}")
