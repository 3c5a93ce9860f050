"""Flow runs: Pending → Running → the final state Prefect's rules give its return value.

An exception in the flow function → Failed; a returned state is used; an iterable of states
with any failed → Failed; anything else → Completed. KeyboardInterrupt and SIGTERM end the run
Crashed, with its running task runs. Submitted task runs still running when the function
returns are waited for; they do not change the flow's final state.
"""

from __future__ import annotations

import inspect
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from statewright.flows import console, run_logs
from statewright.flows.aio import run_coro
from statewright.flows.backend import Backend, Change, FlowRunStart, TaskRunStart
from statewright.flows.context import FlowRun, FlowRunContext, flow_run_ctx, prints_logged
from statewright.flows.engine import CRASHES, TerminationSignal, crash_running, hook_noter
from statewright.flows.futures import PrefectFutureList, TaskRunFuture
from statewright.flows.hooks import run_hooks
from statewright.flows.runtime import open_backend
from statewright.flows.serving import ADOPT_ENV
from statewright.flows.states import (
    Crashed,
    Failed,
    Running,
    State,
    StateType,
    UnknownStateType,
    final_state_of_return,
)
from statewright.flows.timeouts import RunTimeout, timeout

if TYPE_CHECKING:
    from statewright.flows.flows import Flow

_RUN_OF_TYPE = {
    StateType.COMPLETED: ("success", "Completed"),
    StateType.FAILED: ("failed", "Failed"),
    StateType.CRASHED: ("failed", "Crashed"),
    StateType.CANCELLED: ("cancelled", "Cancelled"),
}
_TASK_OF_RUN = {"success": "success", "failed": "failed", "cancelled": "failed"}
HOSTNAME = socket.gethostname()
sleep = time.sleep
"""How a flow run waits (a retry delay): replaced here, not ``time.sleep`` for the whole
process (other threads sleep too: a test that replaced it made them spin)."""


class FlowRunSuspended(BaseException):
    """``suspend_flow_run``: the run is Suspended and its process stops running it."""


def run_flow(flow: Flow[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *,
             return_state: bool = False) -> Any:
    parent = flow_run_ctx.get()
    params = flow.bind(args, kwargs)
    backend = parent.backend if parent is not None else open_backend()
    finished = False
    try:
        state = _run(flow, params, parent, backend)
        finished = True
    except FlowRunSuspended:
        finished = True
        raise
    finally:
        if parent is None:
            backend.close(finished=finished)
    return state if return_state else state.result()


async def run_flow_async(flow: Flow[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                         *, return_state: bool = False) -> Any:
    """An async flow's run: the engine runs here; the flow's coroutine on a loop of its own."""
    return run_flow(flow, args, kwargs, return_state=return_state)


def _run(flow: Flow[..., Any], params: dict[str, Any], parent: FlowRunContext | None,
         backend: Backend) -> State:
    parent_ti = None
    if parent is not None:
        key = f"{flow.name}-subflow"
        _k, ti_name = parent.fresh_name(key, lambda k: f"{flow.name}-{k}")
        parent_ti = backend.start_task_run(TaskRunStart(
            parent.handle.run_pk, ti_name, key, 0, pid=os.getpid(), hostname=HOSTNAME))
    adopt = os.environ.pop(ADOPT_ENV, None) if parent is None else None
    handle = backend.start_flow_run(FlowRunStart(
        flow.name, _run_name(flow, params), _json_safe(params), _fileloc(flow),
        flow.description, parent_task_run=parent_ti, adopt_run=int(adopt) if adopt else None,
        pid=os.getpid(), hostname=HOSTNAME, entrypoint=_entrypoint(flow),
        durable=flow.durable, retries=flow.retries, params_spec=flow.parameter_spec))
    run = FlowRun(handle.run_pk, handle.run_id, flow.name, params,
                  parent_task_run_id=parent_ti)
    log_prints = flow.log_prints if flow.log_prints is not None else (
        parent.log_prints if parent else False)
    executor = ThreadPoolExecutor(max_workers=_max_workers(flow),
                                  thread_name_prefix=f"flow-{flow.name}")
    ctx = FlowRunContext(flow, run, handle, backend, executor, sleep, log_prints,
                         pid=os.getpid(), hostname=HOSTNAME,
                         log_files=run_logs.attach(handle.log_template, handle.run_pk))
    token = flow_run_ctx.set(ctx)
    shown = console.attach() if parent is None else None
    console.flow_run_started(ctx, console.ui_link(handle.flow_name, handle.run_id)
                             if parent is None else None)
    try:
        with prints_logged(), _signals_as_crashes():
            state = _attempts(ctx, params)
    except CRASHES as exc:
        executor.shutdown(wait=False, cancel_futures=True)
        _crash(ctx, exc, parent_ti)
        raise
    finally:
        flow_run_ctx.reset(token)
        executor.shutdown(wait=False)
        run_logs.detach(ctx.log_files)
        console.detach(shown)
        shutdown = getattr(flow.task_runner, "shutdown", None)
        if shutdown is not None:
            shutdown()
    if parent_ti is not None:
        _end_parent_task(backend, parent_ti, state)
    return state


def _attempts(ctx: FlowRunContext, params: dict[str, Any]) -> State:
    flow, run = ctx.flow, ctx.flow_run
    while True:
        run.state = Running()
        run_hooks(flow.on_running_hooks, flow, run, run.state, "on_running",
                  hook_noter(ctx, "flow", run.id))
        try:
            what = f"Flow run {run.name!r}"
            with timeout(None if flow.isasync else flow.timeout_seconds, what):
                value = flow.fn(**params)
                if inspect.iscoroutine(value):
                    value = run_coro(value, flow.timeout_seconds, what)
            state = final_state_of_return(_futures_to_states(value))
            raised = False
        except RunTimeout as exc:
            state, raised = Failed(name="TimedOut", message=str(exc), data=exc), True
        except UnknownStateType as exc:
            state, raised = Failed(message=str(exc), data=exc), False
        except Exception as exc:
            state = Failed(message=f"Flow run encountered an exception. {type(exc).__name__}: "
                                   f"{exc}", data=exc)
            raised = True
        if raised:
            retry = (f"Retry {run.run_count}/{flow.retries} will start"
                     if run.run_count <= flow.retries else None)
            console.flow_run_failed(ctx, state.data, retry)
        if raised and run.run_count <= flow.retries:
            ctx.backend.flow_state(Change(run.id, "running", "running", "Retrying",
                                          state.message))
            run.run_count += 1
            if flow.retry_delay_seconds:
                ctx.sleep(flow.retry_delay_seconds)
            continue
        ctx.executor.shutdown(wait=True)  # submitted task runs finish first
        _finish(ctx, state)
        return state


def _futures_to_states(value: Any) -> Any:
    """Futures the flow returns become their final states (waited for), as in Prefect: a
    returned failed future fails the flow."""
    if isinstance(value, TaskRunFuture):
        return value._future.result()
    if isinstance(value, list | tuple | set) and any(isinstance(v, TaskRunFuture) for v in value):
        kind = list if isinstance(value, PrefectFutureList) else type(value)
        return kind(_futures_to_states(v) for v in value)
    if type(value) is dict and any(isinstance(v, TaskRunFuture) for v in value.values()):
        return {k: _futures_to_states(v) for k, v in value.items()}
    return value


def _finish(ctx: FlowRunContext, state: State) -> None:
    flow, run = ctx.flow, ctx.flow_run
    to, name = _RUN_OF_TYPE.get(state.type, ("failed", "Failed"))
    if state.type is StateType.FAILED and state.name == "TimedOut":
        name = "TimedOut"
    message = state.message
    if state.type not in _RUN_OF_TYPE:
        message = f"The flow returned a {state.type.value} state ({state.name}); it ends Failed."
    ctx.backend.flow_state(Change(run.id, "running", to, name, message))
    run.state = state
    console.flow_run_finished(ctx, state)
    hooks = {"success": flow.on_completion_hooks, "cancelled": flow.on_cancellation_hooks}
    kind = {"success": "on_completion", "cancelled": "on_cancellation"}.get(to, "on_failure")
    run_hooks(hooks.get(to, flow.on_failure_hooks), flow, run, state, kind,
              hook_noter(ctx, "flow", run.id))


def _crash(ctx: FlowRunContext, exc: BaseException, parent_ti: int | None) -> None:
    crash_running(ctx, exc)
    if isinstance(exc, FlowRunSuspended):
        return
    message = (str(exc) if isinstance(exc, TerminationSignal)
               else "Execution was aborted by an interrupt signal.")
    state = Crashed(message=message, data=exc)
    ctx.backend.flow_state(Change(ctx.flow_run.id, "running", "failed", "Crashed", message))
    ctx.flow_run.state = state
    run_hooks(ctx.flow.on_crashed_hooks, ctx.flow, ctx.flow_run, state, "on_crashed",
              hook_noter(ctx, "flow", ctx.flow_run.id))
    if parent_ti is not None:
        _end_parent_task(ctx.backend, parent_ti, state)


def _end_parent_task(backend: Backend, pk: int, state: State) -> None:
    to, name = _RUN_OF_TYPE.get(state.type, ("failed", "Failed"))
    backend.task_state(Change(pk, "running", _TASK_OF_RUN[to], name, state.message, 1))


@contextmanager
def _signals_as_crashes() -> Iterator[None]:
    """In the main thread, SIGTERM raises ``TerminationSignal`` (the run ends Crashed)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous not in (signal.SIG_DFL, None):
        yield
        return

    def handler(signum: int, _frame: Any) -> None:
        raise TerminationSignal(signum)

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _max_workers(flow: Flow[..., Any]) -> int:
    runner = flow.task_runner
    n = getattr(runner, "max_workers", None)
    return int(n) if n else min(32, (os.cpu_count() or 1) + 4)


def _run_name(flow: Flow[..., Any], params: dict[str, Any]) -> str | None:
    custom = flow.flow_run_name
    if custom is None:
        return None
    try:
        return custom() if callable(custom) else custom.format(**params)
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(f"Flow {flow.name!r}: flow_run_name {custom!r} could not be filled "
                         f"from the parameters {sorted(params)}: {exc!r}.") from None


def _json_safe(params: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(params, default=repr))
    return out


def _fileloc(flow: Flow[..., Any]) -> str | None:
    code = getattr(flow.fn, "__code__", None)
    return code.co_filename if code is not None else None


def _entrypoint(flow: Flow[..., Any]) -> str | None:
    """``file:function`` when the flow's function can be found again by its name."""
    fileloc, name = _fileloc(flow), getattr(flow.fn, "__qualname__", "")
    if fileloc is None or not name.isidentifier() or not os.path.isfile(fileloc):
        return None
    return f"{os.path.abspath(fileloc)}:{name}"


def flow_ctx(what: str) -> FlowRunContext:
    from statewright.flows.context import MissingContextError, task_run_ctx

    ctx = flow_run_ctx.get()
    if ctx is None or task_run_ctx.get() is not None:
        raise MissingContextError(f"{what}() can be called only from a flow, not outside one "
                                  "nor from a task.")
    return ctx
