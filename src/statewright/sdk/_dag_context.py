"""The DAG of the enclosing ``with`` block, and the collectors the DAG file loader listens on.

Both are per thread, so two threads may import DAG files at the same time. So are the open
``with setup >> teardown:`` blocks (``statewright.sdk._setup_teardown``).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from statewright.sdk.dag import DAG

_SDK_DIRS = tuple(
    {str(Path(__file__).parent) + os.sep, str(Path(__file__).resolve().parent) + os.sep}
)


class _State(threading.local):
    def __init__(self) -> None:
        self.active: list[DAG] = []
        self.collectors: list[list[DAG]] = []
        self.scopes: list[Any] = []  # open setup/teardown blocks, innermost last
        self.groups: list[Any] = []  # open ``with TaskGroup`` blocks, innermost last


_state = _State()


def push_dag(dag: DAG) -> None:
    _state.active.append(dag)


def pop_dag(dag: DAG) -> None:
    if _state.active and _state.active[-1] is dag:
        _state.active.pop()
    elif dag in _state.active:  # left out of order (an exception unwound several blocks)
        _state.active.remove(dag)


def current_dag() -> DAG | None:
    """The DAG of the innermost ``with DAG(...)`` block (or ``@dag`` call) running now."""
    return _state.active[-1] if _state.active else None


@contextmanager
def no_active_dag() -> Iterator[None]:
    """No ``with DAG(...)`` block is open inside (a task built at run time joins no DAG)."""
    saved = _state.active
    _state.active = []
    try:
        yield
    finally:
        _state.active = saved


def register_dag(dag: DAG) -> None:
    """Tell every loader that is importing a file on this thread that ``dag`` was defined."""
    for collected in _state.collectors:
        if not any(d is dag for d in collected):
            collected.append(dag)


def forget_dag(dag: DAG) -> None:
    """Take back ``register_dag``: ``dag`` is part of another DAG now (the Airflow layer's
    SubDagOperator moves a sub-DAG's tasks into its parent)."""
    for collected in _state.collectors:
        collected[:] = [d for d in collected if d is not dag]


@contextmanager
def collecting_dags() -> Iterator[list[DAG]]:
    """Collect the DAGs completed (``with`` block left, ``@dag`` called) inside the block."""
    collected: list[DAG] = []
    _state.collectors.append(collected)
    depth = len(_state.active)
    scope_depth = len(_state.scopes)
    group_depth = len(_state.groups)
    try:
        yield collected
    finally:
        _state.collectors.remove(collected)
        del _state.active[depth:]  # a failed import must not leave a DAG "active"
        del _state.scopes[scope_depth:]  # nor a setup/teardown block open
        del _state.groups[group_depth:]  # nor a task group


def setup_teardown_scopes() -> list[Any]:
    """The open ``with setup >> teardown:`` blocks of this thread, innermost last."""
    scopes: list[Any] = _state.scopes
    return scopes


def open_task_groups() -> list[Any]:
    """The open ``with TaskGroup`` blocks of this thread, innermost last."""
    groups: list[Any] = _state.groups
    return groups


def caller_location() -> tuple[str, int]:
    """File and line of the nearest frame outside this package: where the user wrote the call."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_SDK_DIRS):
            return filename, frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return "", 0
