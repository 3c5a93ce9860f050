"""The run context of a flow run and of a task run (context variables), and the run logger."""

from __future__ import annotations

import builtins
import contextvars
import itertools
import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from statewright.flows.backend import Backend, FlowRunHandle

if TYPE_CHECKING:
    from statewright.flows.flows import Flow
    from statewright.flows.run_logs import TaskRunLogFiles
    from statewright.flows.states import State
    from statewright.flows.tasks import Task


class MissingContextError(RuntimeError):
    """A run-only call (``get_run_logger``, ``pause_flow_run``) outside any flow or task run."""


@dataclass
class FlowRun:
    """What hooks and ``get_run_context()`` see of a flow run."""

    id: int
    name: str
    flow_name: str
    parameters: dict[str, Any]
    state: State | None = None
    run_count: int = 1
    parent_task_run_id: int | None = None


@dataclass
class TaskRun:
    """What hooks see of a task run: its identity is (task_key, dynamic_key)."""

    id: int
    name: str
    task_key: str
    dynamic_key: str
    flow_run_id: int
    state: State | None = None
    run_count: int = 1
    tags: tuple[str, ...] = ()


@dataclass
class FlowRunContext:
    flow: Flow[..., Any]
    flow_run: FlowRun
    handle: FlowRunHandle
    backend: Backend
    executor: ThreadPoolExecutor
    sleep: Callable[[float], None]
    log_prints: bool = False
    pid: int | None = None
    hostname: str | None = None
    log_files: TaskRunLogFiles | None = None
    _keys: defaultdict[str, itertools.count[int]] = field(
        default_factory=lambda: defaultdict(itertools.count)
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)
    running_task_runs: dict[int, int] = field(default_factory=dict)
    """Task runs now running (id → try number): a crash ends them with the flow run."""

    def next_dynamic_key(self, task_key: str) -> str:
        with self._lock:
            return str(next(self._keys[task_key]))

    def fresh_name(self, task_key: str, make: Callable[[str], str]) -> tuple[str, str]:
        """The next dynamic key and the task run name ``make`` gives it, past the names the
        run already has (a resumed run that runs again)."""
        key = self.next_dynamic_key(task_key)
        name = make(key)
        for _ in range(len(self.handle.taken)):
            if name not in self.handle.taken:
                break
            key = self.next_dynamic_key(task_key)
            name = make(key)
        return key, name


@dataclass
class TaskRunContext:
    task: Task[..., Any]
    task_run: TaskRun
    flow_run_context: FlowRunContext
    parameters: dict[str, Any]
    log_prints: bool = False


flow_run_ctx: contextvars.ContextVar[FlowRunContext | None] = contextvars.ContextVar(
    "statewright_flow_run", default=None
)
task_run_ctx: contextvars.ContextVar[TaskRunContext | None] = contextvars.ContextVar(
    "statewright_task_run", default=None
)


def get_run_context() -> TaskRunContext | FlowRunContext:
    """The task run's context inside a task, else the flow run's; outside both an error."""
    task = task_run_ctx.get()
    if task is not None:
        return task
    flow = flow_run_ctx.get()
    if flow is not None:
        return flow
    raise MissingContextError(
        "No run context: get_run_context() is for code running inside a flow or a task."
    )


def get_run_logger(**extra: Any) -> logging.LoggerAdapter[logging.Logger]:
    """A logger that names the flow run (and task run) it logs for, as Prefect's does."""
    task = task_run_ctx.get()
    flow = flow_run_ctx.get()
    if task is not None:
        return logging.LoggerAdapter(logging.getLogger("statewright.task_runs"), {
            "task_run_id": task.task_run.id, "task_run_name": task.task_run.name,
            "flow_run_id": task.task_run.flow_run_id, "task_name": task.task.name, **extra})
    if flow is not None:
        return logging.LoggerAdapter(logging.getLogger("statewright.flow_runs"), {
            "flow_run_id": flow.flow_run.id, "flow_run_name": flow.flow_run.name,
            "flow_name": flow.flow.name, **extra})
    raise MissingContextError(
        "There is no active flow or task run context: get_run_logger() works only inside a "
        "function decorated with @flow or @task. Outside them use logging.getLogger()."
    )


# -- log_prints -------------------------------------------------------------------------------

_print = builtins.print
_print_installed = False
_print_lock = threading.Lock()


def _print_as_log(*args: Any, **kwargs: Any) -> None:
    task = task_run_ctx.get()
    flow = flow_run_ctx.get()
    wanted = task.log_prints if task is not None else (flow.log_prints if flow else False)
    if not wanted or kwargs.get("file") is not None:
        _print(*args, **kwargs)
        return
    sep = kwargs.get("sep")
    get_run_logger().info((" " if sep is None else sep).join(str(a) for a in args))


@contextmanager
def prints_logged() -> Iterator[None]:
    """Route ``print`` through the run logger where the run asked for ``log_prints``."""
    global _print_installed
    with _print_lock:
        if not _print_installed:
            builtins.print = _print_as_log
            _print_installed = True
    yield
