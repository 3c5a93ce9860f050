"""State hooks, with Prefect's signatures: ``hook(task, task_run, state)`` for tasks and
``hook(flow, flow_run, state)`` for flows. A hook that raises is logged; the state stands."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger("statewright.flows.hooks")


def run_hooks(hooks: Sequence[Callable[..., Any]], owner: Any, run: Any, state: Any,
              kind: str) -> list[str]:
    """Call each hook; return the messages of those that raised (they are logged)."""
    failures: list[str] = []
    for hook in hooks:
        name = getattr(hook, "__name__", repr(hook))
        try:
            hook(owner, run, state)
        except Exception as exc:
            msg = (f"{kind} hook {name!r} of {getattr(owner, 'name', owner)!r} raised "
                   f"{type(exc).__name__}: {exc}; the state {state.name} stands")
            log.exception(msg)
            failures.append(msg)
    return failures
