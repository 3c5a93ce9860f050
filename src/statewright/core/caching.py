"""Cache key functions for ``@task(cache_key_fn=..., cache_expiration=...)`` (Prefect's Cached).

A cache key function takes ``(context, arguments)`` — the task's context and its call
arguments, upstream results already filled in — and returns a string, or ``None`` for "do not
cache this call". Two tries of one task (in any run) with the same key share a stored result
until it expires: the second completes ``success`` named ``Cached`` without running.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["task_input_hash"]


def task_input_hash(context: Any, arguments: dict[str, Any]) -> str | None:
    """A key from the call's arguments (Prefect's ``task_input_hash``); ``None`` when they
    cannot be written as JSON."""
    try:
        text = json.dumps(arguments, sort_keys=True, default=_reject)
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def _reject(value: Any) -> Any:
    raise TypeError(type(value).__name__)
