"""A task process's reads and writes of task state and asset state, answered by its worker.

The task process holds no database session: its backend (:class:`RelayStateBackend`) sends a
:class:`StateRequest` up the pipe to the supervising worker, which answers from the database
(:func:`answer`). A write is fenced by the try number: it is applied only while the task
instance is running the writing try; otherwise it is refused, the refusal is recorded in the
task instance's state history, and the task sees :class:`StaleTryWrite`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine

from statewright.core.task_state import StaleTryWrite, TaskStateError, encode_value, retention_of
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import task_state as repo
from statewright.sdk import task_state as sdk_state

__all__ = ["RelayStateBackend", "StateAnswer", "StateRequest", "answer", "relayed_state"]


@dataclass(frozen=True)
class StateRequest:
    """``scope`` as :class:`statewright.sdk.task_state.StateBackend` describes it; ``op`` is
    ``get`` or ``put`` (``text`` None: delete)."""

    op: str
    scope: tuple[Any, ...]
    key: str
    text: str | None = None
    retention: str | None = None


@dataclass(frozen=True)
class StateAnswer:
    found: bool = False
    text: str | None = None
    error: str | None = None
    refused: str | None = None


class RelayStateBackend:
    def __init__(self, ask: Callable[[Any], Any]) -> None:
        self.ask = ask
        self._lock = threading.Lock()  # one question at a time on the pipe

    def _call(self, request: StateRequest) -> StateAnswer:
        with self._lock:
            reply = self.ask(request)
        if isinstance(reply, BaseException):
            raise reply
        if not isinstance(reply, StateAnswer):
            raise RuntimeError(f"the worker answered state {request.op}({request.key!r}) with "
                               f"{reply!r}")
        if reply.refused:
            raise StaleTryWrite(f"task state {request.key!r} was not written: {reply.refused}")
        if reply.error:
            raise TaskStateError(f"task state {request.key!r}: {reply.error}")
        return reply

    def get(self, scope: tuple[Any, ...], key: str) -> tuple[bool, str | None]:
        reply = self._call(StateRequest("get", scope, key))
        return reply.found, reply.text

    def put(self, scope: tuple[Any, ...], key: str, text: str | None,
            retention: str | None) -> None:
        self._call(StateRequest("put", scope, key, text, retention))


@contextmanager
def relayed_state(ask: Callable[[Any], Any] | None) -> Iterator[None]:
    """The task's state store talks to its worker (``ask``) for the duration of the try."""
    if ask is None:
        yield
        return
    previous = sdk_state.install_backend(RelayStateBackend(ask))
    try:
        yield
    finally:
        sdk_state.install_backend(previous)


def _writer(scope: tuple[Any, ...]) -> tuple[str | None, repo.TaskKey, int]:
    """``(asset name or None, the writing task instance, its try)``."""
    if scope[0] == "asset":
        _, asset_name, dag_id, run_id, task_id, map_index, try_number = scope
        return asset_name, repo.TaskKey(dag_id, run_id, task_id, map_index), try_number
    _, dag_id, run_id, task_id, map_index, try_number = scope
    return None, repo.TaskKey(dag_id, run_id, task_id, map_index), try_number


def answer(engine: Engine, request: StateRequest, *, now: datetime) -> StateAnswer:
    """The worker's side: read, or write behind the try-number fence."""
    try:
        asset_name, ti, try_number = _writer(request.scope)
        if request.op == "get":
            with engine.connect() as conn:
                if asset_name is not None:
                    rows = repo.asset_keys(conn, asset_name, request.key)
                    row = rows[0] if rows else None
                else:
                    row = repo.read(conn, ti, request.key, reader_try=try_number)
            return StateAnswer(False) if row is None else StateAnswer(True, _json(row.value))
        if request.op == "put":
            return _put(engine, request, asset_name, ti, try_number, now)
    except Exception as exc:
        return StateAnswer(error=f"{type(exc).__name__}: {exc}")
    return StateAnswer(error=f"unknown request {request.op!r}")


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _put(engine: Engine, request: StateRequest, asset_name: str | None, ti: repo.TaskKey,
         try_number: int, now: datetime) -> StateAnswer:
    if request.text is not None:  # the limit holds whatever the task process checked
        encode_value(request.key, json.loads(request.text))
    with transaction(engine) as conn:
        refused, ti_id = repo.fence(conn, ti, try_number)
        if refused:
            if ti_id is not None:
                what = f"asset {asset_name!r} state" if asset_name else "task state"
                door.note_task_instances(
                    conn, [(ti_id, f"refused a write of {what} {request.key!r}: {refused}")],
                    actor=Actor.WORKER, now=now)
            return StateAnswer(refused=refused)
        if asset_name is not None:
            repo.asset_write(conn, asset_name, request.key, request.text, writer=ti,
                             writer_try=try_number, now=now)
        else:
            repo.write(conn, ti, request.key, request.text,
                       retention=retention_of(request.retention), writer_try=try_number,
                       now=now)
    return StateAnswer()
