"""``@flow``: Prefect 3's flow decorator. Calling a flow runs it as a flow run; called inside
another flow it is a subflow: a child run, with a task run in the parent that stands for it."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any, Generic, ParamSpec, TypeVar, overload

from statewright.flows.hooks import hook_decorator, hook_list
from statewright.flows.results import serializer_of, storage_of

P = ParamSpec("P")
R = TypeVar("R")

FlowHook = Callable[..., Any]



class Flow(Generic[P, R]):
    """A flow: a function whose calls are flow runs."""

    def __init__(
        self,
        fn: Callable[P, R],
        name: str | None = None,
        version: str | None = None,
        flow_run_name: str | Callable[[], str] | None = None,
        retries: int | None = None,
        retry_delay_seconds: float | None = None,
        task_runner: Any = None,
        description: str | None = None,
        timeout_seconds: float | None = None,
        validate_parameters: bool = True,
        persist_result: bool | None = None,
        result_storage: Any = None,
        result_serializer: Any = None,
        cache_result_in_memory: bool = True,
        log_prints: bool | None = None,
        on_completion: list[FlowHook] | None = None,
        on_failure: list[FlowHook] | None = None,
        on_cancellation: list[FlowHook] | None = None,
        on_crashed: list[FlowHook] | None = None,
        on_running: list[FlowHook] | None = None,
        durable: bool = False,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"@flow decorates a function; got {fn!r}.")
        if retries is not None and (not isinstance(retries, int) or retries < 0):
            raise ValueError(f"retries must be an integer ≥ 0; got {retries!r}.")
        if retry_delay_seconds is not None and retry_delay_seconds < 0:
            raise ValueError(f"retry_delay_seconds must be ≥ 0; got {retry_delay_seconds!r}.")
        if timeout_seconds is not None and timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds must be > 0; got {timeout_seconds!r}.")
        raw = str(name or getattr(fn, "__name__", type(fn).__name__))
        self.fn = fn
        self.isasync = inspect.iscoroutinefunction(fn)
        self.name: str = raw.replace("_", "-") if name is None else raw
        if not self.name or "/" in self.name or "%" in self.name or "&" in self.name:
            raise ValueError(f"Flow name {self.name!r} is not allowed: it must not be empty or "
                             "contain '/', '%' or '&'.")
        self.version = version
        self.flow_run_name = flow_run_name
        self.retries = retries or 0
        self.retry_delay_seconds = float(retry_delay_seconds or 0)
        self.task_runner = task_runner
        self.description = description or inspect.getdoc(fn)
        self.timeout_seconds = timeout_seconds
        self.validate_parameters = validate_parameters
        self.persist_result = persist_result
        self.result_storage = storage_of(result_storage)
        self.result_serializer = serializer_of(result_serializer)
        self.log_prints = log_prints
        self.durable = bool(durable)
        """Record every completed task call's result; a crashed run can be resumed without
        making those calls again (``statewright flows resume``; by itself with ``retries``)."""
        self.on_completion_hooks = hook_list(on_completion, "on_completion")
        self.on_failure_hooks = hook_list(on_failure, "on_failure")
        self.on_cancellation_hooks = hook_list(on_cancellation, "on_cancellation")
        self.on_crashed_hooks = hook_list(on_crashed, "on_crashed")
        self.on_running_hooks = hook_list(on_running, "on_running")
        self.__name__ = getattr(fn, "__name__", self.name)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    on_completion = hook_decorator("on_completion_hooks")
    on_failure = hook_decorator("on_failure_hooks")
    on_cancellation = hook_decorator("on_cancellation_hooks")
    on_crashed = hook_decorator("on_crashed_hooks")
    on_running = hook_decorator("on_running_hooks")

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The call's parameters by name; a call that does not fit the signature is refused."""
        try:
            bound = inspect.signature(self.fn).bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"Flow {self.name!r} was called with parameters it does not "
                            f"take: {exc}.") from None
        bound.apply_defaults()
        return dict(bound.arguments)

    @functools.cached_property
    def parameter_spec(self) -> dict[str, dict[str, Any]]:
        """Each parameter's default and JSON Schema (from its type hint): the trigger form."""
        from statewright.flows.parameters import parameter_spec

        return parameter_spec(self.fn)

    def with_options(self, **options: Any) -> Flow[P, R]:
        keep: dict[str, Any] = {
            "name": self.name, "version": self.version, "flow_run_name": self.flow_run_name,
            "retries": self.retries, "retry_delay_seconds": self.retry_delay_seconds,
            "description": self.description, "timeout_seconds": self.timeout_seconds,
            "log_prints": self.log_prints, "on_completion": self.on_completion_hooks,
            "on_failure": self.on_failure_hooks, "on_cancellation": self.on_cancellation_hooks,
            "on_crashed": self.on_crashed_hooks, "on_running": self.on_running_hooks,
            "task_runner": self.task_runner, "persist_result": self.persist_result,
            "result_storage": self.result_storage, "result_serializer": self.result_serializer,
            "durable": self.durable,
        }
        return Flow(self.fn, **{**keep, **options})

    def __call__(self, *args: Any, return_state: bool = False, **kwargs: Any) -> Any:
        from statewright.flows.flow_engine import run_flow, run_flow_async

        if self.isasync:  # as Prefect's: a coroutine (``await flow()``, ``asyncio.run(flow())``)
            return run_flow_async(self, args, kwargs, return_state=return_state)
        return run_flow(self, args, kwargs, return_state=return_state)

    def serve(self, name: str | None = None, *, cron: str | None = None,
              interval: float | timedelta | None = None, parameters: dict[str, Any] | None = None,
              description: str | None = None, tags: Iterable[str] | None = None,
              paused: bool = False) -> None:
        """Register a schedule for this flow that the scheduler runs like a DAG's."""
        from statewright.flows.serving import serve_flow

        serve_flow(self, name=name, cron=cron, interval=interval,
                          parameters=parameters, description=description, tags=tags,
                          paused=paused)

    def __repr__(self) -> str:
        return f"Flow(name={self.name!r})"


@overload
def flow(__fn: Callable[P, R]) -> Flow[P, R]: ...


@overload
def flow(__fn: None = None, **options: Any) -> Callable[[Callable[P, R]], Flow[P, R]]: ...


def flow(__fn: Callable[P, R] | None = None, **options: Any) -> Any:
    """Prefect's ``@flow`` / ``@flow(...)``."""
    if __fn is not None:
        return Flow(__fn, **options)
    return lambda fn: Flow(fn, **options)
