"""``pause_flow_run`` and ``suspend_flow_run``: a flow run waits for a person (``paused``).

``wait_for_input=Model`` (a pydantic model, or a type such as ``int``) stores the input's JSON
schema with the pause; the person resumes the run with a value (``statewright dags runs resume
RUN_ID --input JSON``, or the API's ``PATCH …/dagRuns/{run}`` with ``input``), checked against
the schema, and the call returns it as the model. Each pause has a key (``key=``, else the
call's number in the run): a suspended run that runs again passes the pauses it was already
resumed from, with their inputs, as Prefect's does.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from typing import Any

from statewright.flows.backend import Change, Pause, PauseKey
from statewright.flows.context import FlowRunContext
from statewright.flows.flow_engine import FlowRunSuspended, flow_ctx

POLL_SECONDS = 10.0
"""How often a paused run asks whether it was resumed (Prefect's ``poll_interval`` default)."""


class _Wanted:
    """The input a pause waits for: a pydantic model, or a type wrapped in one (``value``)."""

    def __init__(self, what: str, wanted: Any) -> None:
        from pydantic import BaseModel, create_model

        self.wrapped = not (isinstance(wanted, type) and issubclass(wanted, BaseModel))
        try:
            self.model: type[BaseModel] = (
                create_model("RunInput", value=(wanted, ...)) if self.wrapped else wanted)
            self.schema: dict[str, Any] = self.model.model_json_schema()
        except Exception as exc:
            raise TypeError(f"{what}(wait_for_input=...) takes a pydantic model (or a type "
                            f"pydantic can check); got {wanted!r}: {exc}") from None

    def value_of(self, given: Any) -> Any:
        obj = self.model.model_validate(given)
        return obj.value if self.wrapped else obj  # type: ignore[attr-defined]


def _pause(what: str, name: str, wait_for_input: Any, key: str | None
           ) -> tuple[FlowRunContext, _Wanted | None, PauseKey, tuple[bool, Any]]:
    ctx = flow_ctx(what)
    wanted = _Wanted(what, wait_for_input) if wait_for_input is not None else None
    pause_key = PauseKey(ctx.flow_run.id, key or f"{what}-{ctx.next_dynamic_key(what)}")
    done = ctx.backend.pause_input(pause_key)
    if not done[0]:  # not resumed from before: pause now
        message = f"{name.lower()} by the flow (key {pause_key.key!r})"
        if wanted is not None:
            message += f", waiting for input {wanted.model.__name__}"
        ctx.backend.pause(Pause(ctx.flow_run.id, name, pause_key.key,
                                wanted.schema if wanted else None, message))
    return ctx, wanted, pause_key, done


def _given(wanted: _Wanted | None, value: Any) -> Any:
    return wanted.value_of(value) if wanted is not None else None


def _awaitable_in_async(fn: Callable[..., Any]) -> Callable[..., Any]:
    """As Prefect's: in an async flow, ``await pause_flow_run(...)`` (the wait runs in a
    worker thread, with the flow run's context); elsewhere a plain call."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return fn(*args, **kwargs)
        return asyncio.to_thread(fn, *args, **kwargs)

    return call


@_awaitable_in_async
def pause_flow_run(wait_for_input: Any = None, timeout: int = 3600,
                   poll_interval: float | None = None, key: str | None = None,
                   sleep: Callable[[float], None] = time.sleep) -> Any:
    """Pause this flow run until a person resumes it (``statewright dags runs resume`` / UI);
    returns the input given when ``wait_for_input`` says one is wanted. Not resumed within
    ``timeout`` seconds, the run fails (``TimedOut``)."""
    ctx, wanted, pause_key, (done, value) = _pause("pause_flow_run", "Paused", wait_for_input,
                                                   key)
    if done:
        return _given(wanted, value)
    deadline = time.monotonic() + timeout
    poll_interval = poll_interval or POLL_SECONDS
    while time.monotonic() < deadline:
        state, name = ctx.backend.flow_run_state(ctx.flow_run.id)
        if state == "running":
            return _given(wanted, ctx.backend.pause_input(pause_key)[1])
        if state != "paused":
            raise RuntimeError(f"The flow run was ended ({name}) while it was paused.")
        sleep(poll_interval)
    ctx.backend.flow_state(Change(ctx.flow_run.id, "paused", "failed", "TimedOut",
                                  f"not resumed within {timeout} seconds"))
    raise RuntimeError(f"Flow run was not resumed within {timeout} seconds.")


@_awaitable_in_async
def suspend_flow_run(wait_for_input: Any = None, flow_run_id: Any = None, timeout: int = 3600,
                     key: str | None = None) -> Any:
    """Suspend this flow run: it is paused (named Suspended) and its process stops running
    it. Resumed, the run runs again from the start; completed task runs whose results were
    persisted are not run again (their cached results are used), and this call returns the
    input given."""
    _ctx, wanted, _key, (done, value) = _pause("suspend_flow_run", "Suspended",
                                               wait_for_input, key)
    if done:
        return _given(wanted, value)
    raise FlowRunSuspended("The flow run was suspended; resume it to run it again.")
