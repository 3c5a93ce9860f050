"""Prefect 3's cache policies: what a task run's cache key is made of.

A policy computes a key from the task run's context and its inputs; policies add up with ``+``.
``NO_CACHE`` (and ``None`` from any policy) means "do not cache this call".
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statewright.core.caching import task_input_hash

__all__ = [
    "DEFAULT", "FLOW_PARAMETERS", "INPUTS", "NO_CACHE", "RUN_ID", "TASK_SOURCE", "CacheKeyFnPolicy",
    "CachePolicy", "task_input_hash",
]


def _hash(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


class CachePolicy:
    """A rule for a cache key; ``None`` means no caching."""

    def compute_key(self, task_ctx: Any, inputs: dict[str, Any],
                    flow_parameters: dict[str, Any]) -> str | None:
        raise NotImplementedError

    def __add__(self, other: CachePolicy) -> CachePolicy:
        return _Compound((self, other))


@dataclass(frozen=True)
class _Compound(CachePolicy):
    policies: tuple[CachePolicy, ...]

    def compute_key(self, task_ctx: Any, inputs: dict[str, Any],
                    flow_parameters: dict[str, Any]) -> str | None:
        keys = [p.compute_key(task_ctx, inputs, flow_parameters) for p in self.policies]
        if any(k is None for k in keys):
            return None
        return _hash(*(k for k in keys if k is not None))

    def __add__(self, other: CachePolicy) -> CachePolicy:
        return _Compound((*self.policies, other))


class _Inputs(CachePolicy):
    def compute_key(self, task_ctx: Any, inputs: dict[str, Any],
                    flow_parameters: dict[str, Any]) -> str | None:
        return task_input_hash(task_ctx, inputs)

    def __repr__(self) -> str:
        return "INPUTS"


class _TaskSource(CachePolicy):
    def compute_key(self, task_ctx: Any, inputs: dict[str, Any],
                    flow_parameters: dict[str, Any]) -> str | None:
        try:
            source = inspect.getsource(task_ctx.task.fn)
        except (OSError, TypeError):
            source = task_ctx.task.task_key
        return _hash(source)

    def __repr__(self) -> str:
        return "TASK_SOURCE"


class _RunId(CachePolicy):
    def compute_key(self, task_ctx: Any, inputs: dict[str, Any],
                    flow_parameters: dict[str, Any]) -> str | None:
        return _hash(str(task_ctx.task_run.flow_run_id))

    def __repr__(self) -> str:
        return "RUN_ID"


class _FlowParameters(CachePolicy):
    def compute_key(self, task_ctx: Any, inputs: dict[str, Any],
                    flow_parameters: dict[str, Any]) -> str | None:
        return task_input_hash(task_ctx, flow_parameters)

    def __repr__(self) -> str:
        return "FLOW_PARAMETERS"


class _NoCache(CachePolicy):
    def compute_key(self, task_ctx: Any, inputs: dict[str, Any],
                    flow_parameters: dict[str, Any]) -> str | None:
        return None

    def __repr__(self) -> str:
        return "NO_CACHE"


@dataclass(frozen=True)
class CacheKeyFnPolicy(CachePolicy):
    """A ``cache_key_fn(context, parameters)`` as a policy."""

    cache_key_fn: Callable[[Any, dict[str, Any]], str | None]

    def compute_key(self, task_ctx: Any, inputs: dict[str, Any],
                    flow_parameters: dict[str, Any]) -> str | None:
        return self.cache_key_fn(task_ctx, inputs)


INPUTS: CachePolicy = _Inputs()
TASK_SOURCE: CachePolicy = _TaskSource()
RUN_ID: CachePolicy = _RunId()
FLOW_PARAMETERS: CachePolicy = _FlowParameters()
NO_CACHE: CachePolicy = _NoCache()
DEFAULT: CachePolicy = INPUTS + TASK_SOURCE + RUN_ID


def json_value(value: Any) -> tuple[bool, Any]:
    """Whether ``value`` can be stored as a cached result (JSON), and the value to store."""
    try:
        return True, json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return False, None
