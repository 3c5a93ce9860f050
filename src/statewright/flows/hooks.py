"""State hooks, with Prefect's signatures: ``hook(task, task_run, state)`` for tasks and
``hook(flow, flow_run, state)`` for flows. A hook that raises is logged; the state stands."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

log = logging.getLogger("statewright.flows.hooks")


def run_hooks(hooks: Sequence[Callable[..., Any]], owner: Any, run: Any, state: Any,
              kind: str, note: Callable[[str], None] | None = None) -> list[str]:
    """Call each hook; a hook that raises is logged and ``note``d (the run's history keeps a
    line of it); return those messages."""
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
            if note is not None:
                note(msg)
    return failures


def hook_list(value: Iterable[Callable[..., Any]] | None, keyword: str) -> list[Callable[..., Any]]:
    """A hook keyword's list; anything but callables is refused, naming the keyword."""
    hooks = list(value or [])
    for h in hooks:
        if not callable(h):
            raise TypeError(f"{keyword} takes a list of callables; {h!r} is not callable.")
    return hooks


def hook_decorator(attribute: str) -> Callable[[Any, Callable[..., Any]], Callable[..., Any]]:
    """A method that adds its function to the hook list ``attribute`` (``@my_task.on_commit``)."""

    def add(self: Any, fn: Callable[..., Any]) -> Callable[..., Any]:
        getattr(self, attribute).append(fn)
        return fn

    add.__name__ = attribute.removesuffix("_hooks")
    add.__doc__ = f"Add ``fn`` to the {add.__name__} hooks (as a decorator)."
    return add
