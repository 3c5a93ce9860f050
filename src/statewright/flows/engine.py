"""Task runs: a task called inside a flow run becomes a task run, recorded as it happens.

Each task run's identity is its task key and a dynamic key (a counter per task key within the
flow run, as Prefect's); its name ``{task name}-{dynamic key}`` is the task instance's task id.
Its states go to the flow run's backend synchronously, in the order Prefect 3.9 writes them:
Pending, Running, then Completed / Failed; Retrying at once when the retry delay is 0, else
AwaitingRetry then Retrying; Running then Cached on a cache hit.
"""

from __future__ import annotations

import contextvars
import inspect
import logging
import random
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from statewright.flows import console, durable, results
from statewright.flows.aio import run_coro
from statewright.flows.annotations import allow_failure, quote
from statewright.flows.backend import CacheEntry, Change, Note, TaskRunStart
from statewright.flows.context import (
    FlowRunContext,
    TaskRun,
    TaskRunContext,
    flow_run_ctx,
    task_run_ctx,
)
from statewright.flows.futures import PrefectFutureList, TaskRunFuture
from statewright.flows.hooks import run_hooks
from statewright.flows.states import (
    AwaitingRetry,
    Cached,
    Completed,
    Crashed,
    Failed,
    Pending,
    Retrying,
    RolledBack,
    Running,
    State,
    StateType,
    UnknownStateType,
    task_state_of_return,
)
from statewright.flows.task_runners import RemoteTaskRunner, TaskArgumentNotSerializable
from statewright.flows.timeouts import RunTimeout, timeout
from statewright.flows.transactions import Transaction

if TYPE_CHECKING:
    from statewright.flows.tasks import Task

log = logging.getLogger("statewright.flows")

# Prefect's types onto task instance states (types of statewright.core.states).
_TI_OF_TYPE = {
    StateType.COMPLETED: "success",
    StateType.FAILED: "failed",
    StateType.CRASHED: "failed",
    StateType.CANCELLED: "failed",
}
_TI_NAMES = {"Completed", "Cached", "RolledBack", "Failed", "Crashed", "TimedOut", "Cancelled"}


class TerminationSignal(BaseException):
    """The flow's process received SIGTERM: the run ends Crashed."""

    def __init__(self, signal: int) -> None:
        super().__init__(f"Execution was aborted by a termination signal ({signal}).")
        self.signal = signal


CRASHES = (KeyboardInterrupt, TerminationSignal, SystemExit)


class UpstreamTaskError(Exception):
    """An upstream task run of this one did not complete."""


# -- calling ------------------------------------------------------------------------------------


def call_task(task: Task[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *,
              return_state: bool = False, wait_for: Iterable[Any] | None = None) -> Any:
    """``task(...)``: run now, in this thread; its result (or its state)."""
    ctx = flow_run_ctx.get()
    if ctx is None:
        return _call_outside_flow(task, args, kwargs, return_state)
    state = run_task(ctx, task, args, kwargs, wait_for)
    return state if return_state else state.result()


def submit_task(task: Task[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *,
                wait_for: Iterable[Any] | None = None) -> TaskRunFuture:
    """``task.submit(...)``: run on the flow run's task runner (threads); a future."""
    ctx = flow_run_ctx.get()
    if ctx is None:
        raise RuntimeError(
            f"Task {task.name!r} was submitted outside a flow: .submit() and .map() need a "
            "flow run's task runner. Call the task inside a function decorated with @flow, "
            "or call it directly (task(...)) to run it here."
        )
    named = None
    if ctx.flow.durable:  # positions follow the calls' order, not the threads' (a resume)
        params = _bind(task, args, kwargs)
        named = ctx.fresh_name(task.task_key, lambda k: _task_run_name(task, k, params))
    # The call runs in a copy of this context (as Prefect's thread runner): the flow run and
    # any transaction around the call go with it.
    inner: Future[State] = ctx.executor.submit(
        contextvars.copy_context().run, _in_context, ctx, task, args, dict(kwargs),
        list(wait_for or []), named)
    return TaskRunFuture(inner, task.name)


def map_task(task: Task[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], *,
             wait_for: Iterable[Any] | None = None) -> PrefectFutureList:
    """``task.map(...)``: one submitted call per item of the iterable arguments; the others
    (and those wrapped in ``unmapped``) are given whole to every call."""
    params = _bind(task, args, kwargs)
    mapped = {k: list(v) for k, v in params.items()
              if not isinstance(v, Unmapped | str | bytes | dict) and _iterable(v)}
    if not mapped:
        raise ValueError(
            f"Task {task.name!r}: .map() needs at least one iterable argument to map over; got "
            f"{sorted(params)}."
        )
    lengths = {k: len(v) for k, v in mapped.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(
            f"Task {task.name!r}: .map() received iterables of different lengths: {lengths}."
        )
    n = next(iter(lengths.values()))
    fixed = {k: (v.value if isinstance(v, Unmapped) else v) for k, v in params.items()
             if k not in mapped}
    out = PrefectFutureList()
    for i in range(n):
        call = {**fixed, **{k: v[i] for k, v in mapped.items()}}
        out.append(submit_task(task, (), call, wait_for=wait_for))
    return out


class Unmapped:
    """``unmapped(value)``: give the value whole to every call of ``.map()``."""

    def __init__(self, value: Any) -> None:
        self.value = value


def unmapped(value: Any) -> Unmapped:
    return Unmapped(value)


def _iterable(value: Any) -> bool:
    try:
        iter(value)
    except TypeError:
        return False
    return True


def _in_context(ctx: FlowRunContext, task: Task[..., Any], args: tuple[Any, ...],
                kwargs: dict[str, Any], wait_for: list[Any],
                named: tuple[str, str] | None = None) -> State:
    token = flow_run_ctx.set(ctx)
    try:
        return run_task(ctx, task, args, kwargs, wait_for, named)
    finally:
        flow_run_ctx.reset(token)


def _call_outside_flow(task: Task[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                       return_state: bool) -> Any:
    """As Prefect 3: a task called outside a flow runs plainly, here and now."""
    try:
        value = task.fn(*args, **kwargs)
        if inspect.iscoroutine(value):
            value = run_coro(value)
    except Exception as exc:
        if return_state:
            return Failed(message=_exc_message("Task", exc), data=exc)
        raise
    state = task_state_of_return(value)
    return state if return_state else state.result()


def _bind(task: Task[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        bound = task.signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"Task {task.name!r} was called with arguments it does not take: "
                        f"{exc}.") from None
    bound.apply_defaults()
    return dict(bound.arguments)


# -- one task run ---------------------------------------------------------------------------------


def run_task(ctx: FlowRunContext, task: Task[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any], wait_for: Iterable[Any] | None,
             named: tuple[str, str] | None = None) -> State:
    params = _bind(task, args, kwargs)
    dynamic_key, name = named or ctx.fresh_name(task.task_key,
                                                lambda k: _task_run_name(task, k, params))
    try:
        params = _resolve(params, list(wait_for or []))
    except UpstreamTaskError as exc:
        pk = ctx.backend.start_task_run(_start(ctx, task, name, run=False))
        state = Pending(message=str(exc), name="NotReady")
        ctx.backend.task_state(Change(pk, "none", "none", "NotReady", str(exc), 0))
        return state
    if ctx.flow.durable:
        done = durable.replayed(ctx, task, name, params)
        if done is not None:
            return done
    pk = ctx.backend.start_task_run(_start(ctx, task, name))
    task_run = TaskRun(pk, name, task.task_key, dynamic_key, ctx.flow_run.id, tags=task.tags)
    task_run.run_count += ctx.handle.tries.get(name, 0)  # a resumed call: its tries before
    tctx = TaskRunContext(task, task_run, ctx, params,
                          log_prints=task.log_prints if task.log_prints is not None
                          else ctx.log_prints)
    token = task_run_ctx.set(tctx)
    txn = Transaction(key=None)
    try:
        with txn:
            state = _attempts(ctx, tctx)
            _stage(ctx, tctx, txn, state)
    finally:
        task_run_ctx.reset(token)
    return state


def _start(ctx: FlowRunContext, task: Task[..., Any], name: str, run: bool = True
           ) -> TaskRunStart:
    return TaskRunStart(ctx.handle.run_pk, name, task.task_key, task.retries, task.tags,
                        ctx.pid, ctx.hostname, run=run)


def _task_run_name(task: Task[..., Any], dynamic_key: str, params: dict[str, Any]) -> str:
    custom = task.task_run_name
    if custom is None:
        return f"{task.name}-{dynamic_key}"
    try:
        text = custom() if callable(custom) else custom.format(**params)
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(f"Task {task.name!r}: task_run_name {custom!r} could not be filled "
                         f"from the call's parameters {sorted(params)}: {exc!r}.") from None
    return f"{text}-{dynamic_key}" if text == task.name else text


def _resolve(params: dict[str, Any], wait_for: list[Any]) -> dict[str, Any]:
    """Futures and states among the arguments become their results; an upstream run that did
    not complete makes this one NotReady."""
    for w in wait_for:
        if isinstance(w, allow_failure):
            _resolve_value(w)  # waited for; its outcome does not matter
            continue
        state = w._future.result() if isinstance(w, TaskRunFuture) else w
        if isinstance(state, State) and not state.is_completed():
            raise UpstreamTaskError(f"Upstream task run ended {state.name}: this one did not run.")
    return {k: _resolve_value(v) for k, v in params.items()}


def _resolve_value(value: Any) -> Any:
    if isinstance(value, quote):
        return value.unwrap()
    if isinstance(value, allow_failure):
        inner = value.unwrap()
        if isinstance(inner, TaskRunFuture):
            inner = inner._future.result()
        if isinstance(inner, State):
            return inner.result(raise_on_failure=False)
        return _resolve_value(inner)
    if isinstance(value, TaskRunFuture):
        value = value._future.result()
    if isinstance(value, State):
        if not value.is_completed():
            raise UpstreamTaskError(
                f"Upstream task run did not reach a 'COMPLETED' state: {value.name}.")
        return value.data
    if type(value) in (list, tuple, set):
        return type(value)(_resolve_value(v) for v in value)
    if type(value) is dict:
        return {k: _resolve_value(v) for k, v in value.items()}
    return value


def _attempts(ctx: FlowRunContext, tctx: TaskRunContext) -> State:
    """The tries of one task run; returns its final state (persisted)."""
    task, run = tctx.task, tctx.task_run
    options = results.options_for(task, ctx.flow)
    key = _cache_key(ctx, tctx, results.policy_for(task, options))
    if key is not None and not task.refresh_cache:
        hit, value = _cached(ctx, task, key)
        if hit:
            state: State = Cached(data=value)
            state = _persist(ctx, run, state, "running", tctx if ctx.flow.durable else None)
            console.task_run_finished(tctx, state)
            return state
    while True:
        ctx.running_task_runs[run.id] = run.run_count
        if ctx.log_files is not None:
            ctx.log_files.try_started(run.id, run.name, run.run_count)
        if run.run_count == 1:
            console.task_run_started(tctx)
        run.state = Retrying() if run.run_count > 1 else Running()
        run_hooks(task.on_running_hooks, task, run, run.state, "on_running",
                  hook_noter(ctx, "task", run.id))
        state, exc = _call(task, tctx)
        if exc is not None and _retry(ctx, tctx, exc):
            continue
        if exc is not None:
            console.task_try_failed(tctx, exc, None)
        ctx.running_task_runs.pop(run.id, None)
        state = _persist(ctx, run, state, "running", tctx if ctx.flow.durable else None)
        console.task_run_finished(tctx, state)
        if state.is_completed() and key is not None:
            _put(ctx, tctx, key, options, state.data)
        return state


def _cached(ctx: FlowRunContext, task: Task[..., Any], key: str) -> tuple[bool, Any]:
    hit, stored = ctx.backend.cache_get(CacheEntry(ctx.flow.name, task.task_key, key))
    if not hit:
        return False, None
    try:
        return True, results.load(stored)
    except Exception as exc:  # its file was removed or cannot be read: run the task
        log.warning("task %r: its persisted result cannot be read (%s); it runs again",
                    task.name, exc)
        return False, None


def _put(ctx: FlowRunContext, tctx: TaskRunContext, key: str,
         options: results.ResultOptions, value: Any) -> None:
    task, run = tctx.task, tctx.task_run
    try:
        stored = results.store(options, key, value)
    except (results.ResultNotStored, OSError) as exc:
        log.warning("task run %r: its result is not persisted: %s", run.name, exc)
        return
    expires = datetime.now(UTC) + task.cache_expiration if task.cache_expiration else None
    ctx.backend.cache_put(CacheEntry(ctx.flow.name, task.task_key, key, stored, expires,
                                     ctx.handle.run_id, run.run_count))


def _call(task: Task[..., Any], tctx: TaskRunContext) -> tuple[State, BaseException | None]:
    run = tctx.task_run
    runner = tctx.flow_run_context.flow.task_runner
    what = f"Task run {run.name!r}"
    try:
        with timeout(None if task.isasync else task.timeout_seconds, what):
            if isinstance(runner, RemoteTaskRunner):
                value = runner.call(task.name, task.fn, tctx.parameters)
            else:
                value = task.fn(**tctx.parameters)
            if inspect.iscoroutine(value):
                value = run_coro(value, task.timeout_seconds, what)
        return task_state_of_return(value), None
    except TaskArgumentNotSerializable as exc:
        return Failed(message=str(exc), data=exc), None
    except RunTimeout as exc:
        return Failed(name="TimedOut", message=str(exc), data=exc), exc
    except UnknownStateType as exc:
        return Failed(message=str(exc), data=exc), None
    except CRASHES as exc:
        crashed = Crashed(message=_crash_message(exc), data=exc)
        _persist(tctx.flow_run_context, run, crashed, "running")
        tctx.flow_run_context.running_task_runs.pop(run.id, None)
        raise
    except Exception as exc:
        return Failed(message=_exc_message("Task", exc), data=exc), exc


def _retry(ctx: FlowRunContext, tctx: TaskRunContext, exc: BaseException) -> bool:
    """Start the next try when retries are left (persisting Retrying, or AwaitingRetry then
    Retrying after the delay); False when the try's failure is final."""
    task, run = tctx.task, tctx.task_run
    if run.run_count > task.retries:
        return False
    if task.retry_condition_fn is not None:
        try:
            if not task.retry_condition_fn(task, run, Failed(data=exc)):
                return False
        except Exception:
            log.exception("retry_condition_fn of task %r raised: no retry", task.name)
            return False
    delay = _delay(task, run.run_count)
    message = _exc_message("Task", exc)
    when = "immediately" if delay <= 0 else f"{delay:g} second(s) from now"
    console.task_try_failed(tctx, exc, f"Retry {run.run_count}/{task.retries} will start {when}")
    if delay <= 0:
        ctx.backend.task_state(Change(run.id, "running", "running", "Retrying", message,
                                      run.run_count, increment_try=True))
    else:
        due = datetime.now(UTC) + timedelta(seconds=delay)
        ctx.backend.task_state(Change(run.id, "running", "up_for_retry", "AwaitingRetry",
                                      message, run.run_count, next_retry_at=due))
        run.state = AwaitingRetry(message=message)
        ctx.sleep(delay)
        ctx.backend.task_state(Change(run.id, "up_for_retry", "running", "Retrying", None,
                                      run.run_count, increment_try=True))
    run.run_count += 1
    return True


def _delay(task: Task[..., Any], run_count: int) -> float:
    spec = task.retry_delay_seconds
    if callable(spec):
        spec = [float(d) for d in spec(task.retries)]
    if isinstance(spec, list):
        base = spec[min(run_count - 1, len(spec) - 1)] if spec else 0.0
    else:
        base = float(spec)
    if task.retry_jitter_factor and base > 0:
        base = max(0.0, base + random.uniform(-1, 1) * base * task.retry_jitter_factor)
    return base


def _cache_key(ctx: FlowRunContext, tctx: TaskRunContext, policy: Any) -> str | None:
    if policy is None:
        return None
    try:
        return policy.compute_key(tctx, tctx.parameters, ctx.flow_run.parameters)
    except Exception:
        log.exception("the cache key of task run %r could not be computed: not cached",
                      tctx.task_run.name)
        return None


def _persist(ctx: FlowRunContext, run: TaskRun, state: State, frm: str,
             recorded: TaskRunContext | None = None) -> State:
    """Store the task run's final state; in a durable run a completed or failed call is
    recorded with it (its result, or its exception), in one transaction. Returns the state."""
    to = _TI_OF_TYPE.get(state.type)
    if to is None:
        state = Failed(message=f"A task run cannot end in a {state.type.value} state "
                               f"({state.name}); it ends Failed.")
        to = "failed"
    name = state.name if state.name in _TI_NAMES else ("Completed" if to == "success"
                                                     else "Failed")
    if state.type is StateType.CRASHED:
        name = "Crashed"
    elif state.type is StateType.CANCELLED:
        name = "Cancelled"
    change = Change(run.id, frm, to, name, state.message, run.run_count)
    if recorded is not None and state.type in (StateType.COMPLETED, StateType.FAILED):
        step = durable.step(ctx, recorded, change, state)
        if isinstance(step, str):  # a result that cannot be recorded fails the call
            return _persist(ctx, run, Failed(message=step), frm)
        ctx.backend.record_step(step)
    else:
        ctx.backend.task_state(change)
    run.state = state
    return state


def _stage(ctx: FlowRunContext, tctx: TaskRunContext, txn: Transaction, state: State) -> None:
    """Stage the result in the task run's transaction; then the state hooks."""
    task, run = tctx.task, tctx.task_run

    def rolled_back(_txn: Transaction) -> None:
        _rename(ctx, run, RolledBack(message="Task rolled back as part of transaction"))

    rolled_back.log_on_run = False  # type: ignore[attr-defined]
    own: list[Callable[[Transaction], Any]] = [] if state.is_failed() else [rolled_back]
    txn.stage(state.data, on_rollback_hooks=own + task.on_rollback_hooks,
              on_commit_hooks=task.on_commit_hooks)
    if state.is_failed() or state.is_crashed():
        txn.rollback()
        run_hooks(task.on_failure_hooks, task, run, state, "on_failure",
                  hook_noter(ctx, "task", run.id))
    elif state.is_completed():
        run_hooks(task.on_completion_hooks, task, run, state, "on_completion",
                  hook_noter(ctx, "task", run.id))


def hook_noter(ctx: FlowRunContext, kind: str, pk: int) -> Callable[[str], None]:
    return lambda message: ctx.backend.note(Note(kind, pk, message))


def _rename(ctx: FlowRunContext, run: TaskRun, state: State) -> None:
    ctx.backend.task_state(Change(run.id, "success", "success", str(state.name), state.message,
                                  run.run_count))
    run.state = state


def _exc_message(kind: str, exc: BaseException) -> str:
    return f"{kind} run encountered an exception {type(exc).__name__}: {exc}"


def _crash_message(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "Execution was aborted by an interrupt signal (KeyboardInterrupt)."
    return str(exc) or f"Execution was aborted: {type(exc).__name__}."


def crash_running(ctx: FlowRunContext, exc: BaseException) -> None:
    """The flow's process is going down: its task runs still running end Crashed."""
    for pk, tries in list(ctx.running_task_runs.items()):
        ctx.backend.task_state(Change(pk, "running", "failed", "Crashed", _crash_message(exc),
                                      tries))
    ctx.running_task_runs.clear()


__all__ = ["Completed", "call_task", "map_task", "run_task", "submit_task", "unmapped"]
