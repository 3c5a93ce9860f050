"""``@task``: Prefect 3's task decorator. Calling a task inside a flow runs it as a task run of
that flow; ``.submit()`` runs it on the flow's task runner and returns a future; ``.map()``
submits one call per item."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any, Generic, ParamSpec, TypeVar, overload

from statewright.flows.cache_policies import CacheKeyFnPolicy, CachePolicy
from statewright.flows.cache_policies import task_input_hash as task_input_hash  # prefect.tasks
from statewright.flows.hooks import hook_decorator, hook_list
from statewright.flows.results import serializer_of, storage_of

P = ParamSpec("P")
R = TypeVar("R")

TaskHook = Callable[..., Any]


def _task_key(fn: Callable[..., Any]) -> str:
    """Prefect's task key: the function's name and a hash of its code."""
    qualname = getattr(fn, "__qualname__", type(fn).__name__).split(".")[-1]
    code = getattr(fn, "__code__", None)
    digest = hashlib.sha256(code.co_code if code else qualname.encode()).hexdigest()[:8]
    return f"{qualname}-{digest}"



def _retry_delays(value: Any) -> float | list[float] | Callable[[int], list[float]]:
    if value is None:
        return 0.0
    if callable(value):
        return value  # type: ignore[no-any-return]
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    if isinstance(value, list | tuple) and value and all(
        isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in value
    ):
        if len(value) > 50:
            raise ValueError("retry_delay_seconds can have at most 50 delays.")
        return [float(v) for v in value]
    raise ValueError(
        f"retry_delay_seconds must be a number of seconds ≥ 0 or a list of them; got {value!r}."
    )


class Task(Generic[P, R]):
    """A task: a function whose calls inside a flow are task runs."""

    def __init__(
        self,
        fn: Callable[P, R],
        name: str | None = None,
        description: str | None = None,
        tags: Iterable[str] | None = None,
        version: str | None = None,
        cache_policy: CachePolicy | None = None,
        cache_key_fn: Callable[[Any, dict[str, Any]], str | None] | None = None,
        cache_expiration: timedelta | None = None,
        task_run_name: str | Callable[[], str] | None = None,
        retries: int | None = None,
        retry_delay_seconds: float | list[float] | Callable[[int], list[float]] | None = None,
        retry_jitter_factor: float | None = None,
        persist_result: bool | None = None,
        result_storage: Any = None,
        result_serializer: Any = None,
        result_storage_key: str | None = None,
        cache_result_in_memory: bool = True,
        timeout_seconds: float | None = None,
        log_prints: bool | None = None,
        refresh_cache: bool | None = None,
        on_completion: list[TaskHook] | None = None,
        on_failure: list[TaskHook] | None = None,
        on_running: list[TaskHook] | None = None,
        on_rollback: list[TaskHook] | None = None,
        on_commit: list[TaskHook] | None = None,
        retry_condition_fn: Callable[..., bool] | None = None,
        viz_return_value: Any = None,
        asset_deps: Any = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"@task decorates a function; got {fn!r}.")
        if retries is not None and (not isinstance(retries, int) or retries < 0):
            raise ValueError(f"retries must be an integer ≥ 0; got {retries!r}.")
        if timeout_seconds is not None and timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds must be > 0; got {timeout_seconds!r}.")
        if cache_policy is not None and not isinstance(cache_policy, CachePolicy):
            raise TypeError(
                f"cache_policy must be a cache policy (INPUTS, TASK_SOURCE, …); got "
                f"{cache_policy!r}."
            )
        if cache_key_fn is not None and cache_policy is not None:
            raise ValueError("Give cache_key_fn or cache_policy, not both.")
        self.fn = fn
        self.isasync = inspect.iscoroutinefunction(fn)
        self.name: str = str(name or getattr(fn, "__name__", type(fn).__name__))
        self.description = description or inspect.getdoc(fn)
        self.tags = tuple(tags or ())
        self.version = version
        self.cache_policy: CachePolicy | None = (
            CacheKeyFnPolicy(cache_key_fn) if cache_key_fn is not None else cache_policy
        )
        self.cache_key_fn = cache_key_fn
        self.cache_expiration = cache_expiration
        self.task_run_name = task_run_name
        self.retries = retries or 0
        self.retry_delay_seconds = _retry_delays(retry_delay_seconds)
        self.retry_jitter_factor = retry_jitter_factor
        self.persist_result = persist_result
        self.result_storage = storage_of(result_storage)
        self.result_serializer = serializer_of(result_serializer)
        self.timeout_seconds = timeout_seconds
        self.log_prints = log_prints
        self.refresh_cache = bool(refresh_cache)
        self.retry_condition_fn = retry_condition_fn
        self.on_completion_hooks = hook_list(on_completion, "on_completion")
        self.on_failure_hooks = hook_list(on_failure, "on_failure")
        self.on_running_hooks = hook_list(on_running, "on_running")
        self.on_rollback_hooks = hook_list(on_rollback, "on_rollback")
        self.on_commit_hooks = hook_list(on_commit, "on_commit")
        self.task_key = _task_key(fn)
        self.signature = inspect.signature(fn)
        self.__name__ = self.name
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    # -- hooks as decorators --------------------------------------------------------------------

    on_commit = hook_decorator("on_commit_hooks")
    on_rollback = hook_decorator("on_rollback_hooks")
    on_completion = hook_decorator("on_completion_hooks")
    on_failure = hook_decorator("on_failure_hooks")
    on_running = hook_decorator("on_running_hooks")

    def with_options(self, **options: Any) -> Task[P, R]:
        """A copy with some options changed (Prefect's ``with_options``)."""
        keep: dict[str, Any] = {
            "name": self.name, "description": self.description, "tags": self.tags,
            "version": self.version, "cache_expiration": self.cache_expiration,
            "task_run_name": self.task_run_name, "retries": self.retries,
            "retry_delay_seconds": self.retry_delay_seconds, "timeout_seconds":
            self.timeout_seconds, "log_prints": self.log_prints, "refresh_cache":
            self.refresh_cache, "on_completion": self.on_completion_hooks, "on_failure":
            self.on_failure_hooks, "on_running": self.on_running_hooks, "on_rollback":
            self.on_rollback_hooks, "on_commit": self.on_commit_hooks,
            "retry_condition_fn": self.retry_condition_fn,
            "persist_result": self.persist_result, "result_storage": self.result_storage,
            "result_serializer": self.result_serializer,
        }
        if "cache_key_fn" not in options and "cache_policy" not in options:
            if self.cache_key_fn is not None:
                keep["cache_key_fn"] = self.cache_key_fn
            else:
                keep["cache_policy"] = self.cache_policy
        return Task(self.fn, **{**keep, **options})

    # -- calling ------------------------------------------------------------------------------

    def __call__(self, *args: Any, return_state: bool = False,
                 wait_for: Iterable[Any] | None = None, **kwargs: Any) -> Any:
        from statewright.flows.engine import call_task

        if self.isasync:  # as Prefect's: a coroutine, to await
            return _call_async(self, args, kwargs, return_state, wait_for)
        return call_task(self, args, kwargs, return_state=return_state, wait_for=wait_for)

    def submit(self, *args: Any, wait_for: Iterable[Any] | None = None,
               return_state: bool = False, **kwargs: Any) -> Any:
        """A future of the call (``return_state=True``: its final state, once it ends)."""
        from statewright.flows.engine import submit_task

        future = submit_task(self, args, kwargs, wait_for=wait_for)
        return _final_state(future) if return_state else future

    def map(self, *args: Any, wait_for: Iterable[Any] | None = None,
            return_state: bool = False, **kwargs: Any) -> Any:
        """Futures of the calls (``return_state=True``: their final states, once ended)."""
        from statewright.flows.engine import map_task

        futures = map_task(self, args, kwargs, wait_for=wait_for)
        return [_final_state(f) for f in futures] if return_state else futures

    def __repr__(self) -> str:
        return f"Task(name={self.name!r})"


def _final_state(future: Any) -> Any:
    future.wait()
    return future.state


async def _call_async(task: Task[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                      return_state: bool, wait_for: Iterable[Any] | None) -> Any:
    """``await my_async_task(...)``: the task run goes to a worker thread (the flow run's
    context with it), so that awaiting several at once runs them at once."""
    import asyncio

    from statewright.flows.engine import call_task

    return await asyncio.to_thread(call_task, task, args, kwargs, return_state=return_state,
                                   wait_for=wait_for)


@overload
def task(__fn: Callable[P, R]) -> Task[P, R]: ...


@overload
def task(__fn: None = None, **options: Any) -> Callable[[Callable[P, R]], Task[P, R]]: ...


def task(__fn: Callable[P, R] | None = None, **options: Any) -> Any:
    """Prefect's ``@task`` / ``@task(...)``."""
    if __fn is not None:
        return Task(__fn, **options)
    return lambda fn: Task(fn, **options)
