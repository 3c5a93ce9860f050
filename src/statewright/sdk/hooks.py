"""State hooks (Prefect's idea) and result caching arguments of a task.

``on_state={"failed": fn, "Cached": [fn, ...]}`` registers hooks by state type (``success``,
``failed``, ``up_for_retry``, ``running``, ...) or by state name (``Cached``, ``Retrying``,
``TimedOut``, ...); ``on_state_change=[fn]`` registers hooks for every transition. They run in the
task's process, for the transitions its try takes (into ``running``, and the state the try ends
in), and receive one argument: the task's context with ``previous_state``,
``previous_state_name``, ``state``, ``state_name`` and ``exception`` added.

Hooks in Airflow's other sense — clients of external systems made from a connection — are here
too: ``BaseHook`` (``get_connection``) and ``HttpHook``; the SQL hooks are in
``statewright.providers.common.sql``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from statewright.core.errors import DagDefinitionError
from statewright.core.lazy import lazy_exports
from statewright.core.states import StateName, TaskInstanceState
from statewright.sdk._validation import to_callback_list, to_timedelta
from statewright.sdk.basehook import BaseHook

if TYPE_CHECKING:
    from statewright.sdk.http_hook import HttpHook

__all__ = ["STATE_HOOK_KEYS", "BaseHook", "HttpHook", "check_cache_args", "to_state_hooks"]

STATE_HOOK_KEYS: frozenset[str] = frozenset(
    {s.value for s in TaskInstanceState} | {n.value for n in StateName}
)


def to_state_hooks(value: Any, what: str) -> dict[str, list[Callable[..., Any]]]:
    """``on_state``: a mapping of a state type or a state name to a callable or a list."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DagDefinitionError(
            f"{what} must be a dict of state to hook, e.g. {{'failed': notify}}; got {value!r}."
        )
    hooks: dict[str, list[Callable[..., Any]]] = {}
    for key, fns in value.items():
        if not isinstance(key, str) or key not in STATE_HOOK_KEYS:
            types = ", ".join(sorted(s.value for s in TaskInstanceState))
            names = ", ".join(sorted(n.value for n in StateName))
            raise DagDefinitionError(
                f"{what}: {key!r} is neither a state type ({types}) nor a state name ({names})."
            )
        hooks[key] = to_callback_list(fns, f"{what}[{key!r}]")
    return hooks


def check_cache_args(
    cache_key_fn: Any, cache_expiration: Any, where: str
) -> tuple[Callable[..., Any] | None, timedelta | None]:
    if cache_key_fn is not None and not callable(cache_key_fn):
        raise DagDefinitionError(
            f"{where}: cache_key_fn must be a callable (context, arguments) -> str, "
            f"got {cache_key_fn!r}."
        )
    expiration = to_timedelta(cache_expiration, f"{where}: cache_expiration", allow_none=True)
    if expiration is not None and cache_key_fn is None:
        raise DagDefinitionError(
            f"{where}: cache_expiration is set but cache_key_fn is not; pass a cache_key_fn "
            "(for example statewright.sdk.caching.task_input_hash)."
        )
    if expiration is not None and expiration <= timedelta(0):
        raise DagDefinitionError(f"{where}: cache_expiration must be positive.")
    return cache_key_fn, expiration


# httpx (with the command-line tools it loads) costs every process that imports the SDK 7 MiB
# and 60 ms, and most never make a request.
__getattr__ = lazy_exports(__name__, {"HttpHook": "statewright.sdk.http_hook"})
