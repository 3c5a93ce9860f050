"""Calls the plugins' listeners after state changes commit (the door's after-commit relay).

:func:`install` (once per process, by each composition root) loads the plugins and, when any
plugin lists a listener, adds a transition listener to the door. Each committed change of a
task instance or a DAG run becomes Airflow's listener hook call (``on_task_instance_running``,
``on_dag_run_success``, ...). A listener that raises is logged; the state change stands.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from sqlalchemy import Engine, select

from statewright.db import transition as door
from statewright.db.tables import dag_run, task_instance
from statewright.sdk import plugins

__all__ = ["hook_calls", "install", "remember_dags"]

log = logging.getLogger(__name__)

_TI_HOOKS = {"running": "on_task_instance_running", "success": "on_task_instance_success",
             "failed": "on_task_instance_failed", "skipped": "on_task_instance_skipped"}
_RUN_HOOKS = {"running": "on_dag_run_running", "success": "on_dag_run_success",
              "failed": "on_dag_run_failed"}

_lock = threading.Lock()
_installed: Callable[[], None] | None = None
_engine: Engine | None = None
_dags: dict[str, Any] = {}


def remember_dags(dags: dict[str, Any]) -> None:
    """DAG objects this process has loaded: a listener's ``task_instance`` carries its task."""
    _dags.update(dags)


def install(engine: Engine | None = None) -> bool:
    """Load the plugins and hand their listeners the door's committed changes (once per
    process); ``engine`` lets a listener's ``dag_run`` carry its dates. True when installed."""
    global _installed, _engine
    plugins.load_plugins()
    with _lock:
        if engine is not None:
            _engine = engine
        if _installed is None and plugins.listeners():
            _installed = door.add_transition_listener(_on_events)
    return _installed is not None


@contextlib.contextmanager
def installed(engine: Engine) -> Iterator[None]:
    """``install(engine)`` for the block; the engine listeners read through before comes back
    after it (``dag.test()``: the run's database is heard while it runs)."""
    global _engine
    with _lock:
        previous = _engine
    install(engine)
    try:
        yield
    finally:
        with _lock:
            if _engine is engine:
                _engine = previous


def forget(engine: Engine) -> None:
    """``engine`` is being closed by its owner: listeners stop reading through it (a closed
    engine would open new connections that nobody closes)."""
    global _engine
    with _lock:
        if _engine is engine:
            _engine = None


def hook_calls(events: Sequence[door.TransitionEvent]) -> list[tuple[str, dict[str, Any]]]:
    """The listener hooks the events call, with their arguments (in order)."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for e in events:
        if e.entity == door.ENTITY_RUN and e.to in _RUN_HOOKS:
            calls.append((_RUN_HOOKS[e.to], {"dag_run": _dag_run(e), "msg": e.name}))
        elif e.entity != door.ENTITY_RUN and e.to in _TI_HOOKS:
            if e.to == "skipped" and e.frm != "running":
                continue  # Airflow calls it only for a task that skipped itself
            ti, message = _ti(e)
            args: dict[str, Any] = {"previous_state": e.frm, "task_instance": ti}
            if e.to == "failed":
                args["error"] = message
            calls.append((_TI_HOOKS[e.to], args))
    return calls


def _on_events(events: Sequence[door.TransitionEvent]) -> None:
    calls = hook_calls(events)
    if not calls:
        return
    for listener in plugins.listeners():
        for hook, args in calls:
            fn = getattr(listener, hook, None)
            if fn is None:
                continue
            try:
                fn(**_accepted(fn, args))
            except Exception:
                log.exception("listener %s.%s raised; the state change stands",
                              getattr(listener, "__name__", type(listener).__name__), hook)


def _accepted(fn: Callable[..., Any], args: dict[str, Any]) -> dict[str, Any]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return args
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return args
    return {k: v for k, v in args.items() if k in params}


def _ti(e: door.TransitionEvent) -> tuple[plugins.TaskInstance, str | None]:
    """The listener's task instance, and the failure's message (for ``error``)."""
    dag = _dags.get(e.dag_id)
    task = dag.task_dict.get(e.task_id) if dag is not None and e.task_id else None
    operator = type(task).__name__ if task is not None else None
    message = None
    if _engine is not None and (operator is None or e.to == "failed"):
        c = task_instance.c
        with _engine.connect() as conn:
            row = conn.execute(select(c.operator, c.state_message)
                               .where(c.id == e.entity_id)).first()
        if row is not None:
            operator, message = operator or row.operator, row.state_message
    ti = plugins.TaskInstance(
        dag_id=e.dag_id, run_id=e.run_id, task_id=e.task_id or "",
        map_index=-1 if e.map_index is None else e.map_index, try_number=e.try_number,
        state=e.to, operator=operator, task=task)
    return ti, message


def _dag_run(e: door.TransitionEvent) -> plugins.DagRun:
    run = plugins.DagRun(dag_id=e.dag_id, run_id=e.run_id, state=e.to)
    if _engine is None:
        return run
    c = dag_run.c
    with _engine.connect() as conn:
        row = conn.execute(select(c.run_type, c.logical_date, c.queued_at, c.start_date,
                                  c.end_date, c.conf).where(c.id == e.entity_id)).first()
    if row is not None:
        run.run_type, run.logical_date, run.queued_at = row.run_type, row.logical_date, \
            row.queued_at
        run.start_date, run.end_date, run.conf = row.start_date, row.end_date, row.conf or {}
    return run
