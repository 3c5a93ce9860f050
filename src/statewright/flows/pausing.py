"""``pause_flow_run`` and ``suspend_flow_run``: a flow run waits for a person (``paused``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from statewright.flows.backend import Change
from statewright.flows.context import FlowRunContext
from statewright.flows.flow_engine import FlowRunSuspended, flow_ctx


def _pause(what: str, name: str, wait_for_input: Any, key: str | None) -> FlowRunContext:
    ctx = flow_ctx(what)
    if wait_for_input is not None:
        raise NotImplementedError(
            f"{what}(wait_for_input=...) needs the awaiting_input state, which this version "
            "does not have: pause without wait_for_input and pass values as parameters.")
    ctx.backend.flow_state(Change(ctx.flow_run.id, "running", "paused", name,
                                  f"{name.lower()} by the flow (key {key!r})" if key else None))
    return ctx


def pause_flow_run(wait_for_input: Any = None, timeout: int = 3600, poll_interval: int = 10,
                   key: str | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
    """Pause this flow run until a person resumes it (``statewright dags runs resume`` / UI);
    not resumed within ``timeout`` seconds, the run fails (``TimedOut``)."""
    ctx = _pause("pause_flow_run", "Paused", wait_for_input, key)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state, name = ctx.backend.flow_run_state(ctx.flow_run.id)
        if state == "running":
            return
        if state != "paused":
            raise RuntimeError(f"The flow run was ended ({name}) while it was paused.")
        sleep(poll_interval)
    ctx.backend.flow_state(Change(ctx.flow_run.id, "paused", "failed", "TimedOut",
                                  f"not resumed within {timeout} seconds"))
    raise RuntimeError(f"Flow run was not resumed within {timeout} seconds.")


def suspend_flow_run(wait_for_input: Any = None, flow_run_id: Any = None, timeout: int = 3600,
                     key: str | None = None) -> None:
    """Suspend this flow run: it is paused (named Suspended) and its process stops running it."""
    _pause("suspend_flow_run", "Suspended", wait_for_input, key)
    raise FlowRunSuspended("The flow run was suspended; resume it to run it again.")
