"""Result caching (Prefect's Cached): ``@task(cache_key_fn=..., cache_expiration=...)``.

The exchange, with the task process holding no database session:

1. in the task process, before the task runs, the cache key is computed from the context and
   the task's call arguments (user code: ``cache_key_fn(context, arguments)``);
2. the task process asks its supervising worker for the key (a :class:`CacheLookup` sent down
   its pipe; the in-process executor calls :func:`lookup` directly); the worker reads
   ``task_cache`` and answers hit (with the stored value) or miss;
3. on a hit the try ends at once with the kind ``cached``: the worker applies ``success`` named
   ``Cached`` with the stored value as the task's result; the task's code does not run;
4. on a miss the task runs; when it succeeds, the worker stores its result under the key (in
   the transaction that records the success), to expire ``cache_expiration`` later (never when
   it is not set).

A cache key function that raises, or returns something else than a string or ``None``, is
reported in the task's log and in the state history, and the task runs as if it had no cache:
nothing is read from or written to the cache. A ``None`` key means "do not cache this call".
Keys longer than 500 characters are stored as their SHA-256.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection

from statewright.core.states import TI, TaskInstanceState
from statewright.db.repositories import task_cache as cache_repo
from statewright.sdk.xcom_arg import resolve_references

log = logging.getLogger("statewright.task")
_MAX_KEY = 500
EXTRA_KEY = "cache"


@dataclass(frozen=True)
class CacheLookup:
    """Sent by a task process to its worker: is there a stored result for this key?"""

    dag_id: str
    task_id: str
    cache_key: str


@dataclass(frozen=True)
class CacheAnswer:
    hit: bool
    value: Any = None
    stored_at: datetime | None = None


@dataclass(frozen=True)
class CacheDecision:
    """What the task process decided before running the task."""

    key: str | None = None
    hit: bool = False
    value: Any = None
    problem: str | None = None
    """Why the cache was not used (the key function raised, or returned a bad key)."""


NO_CACHE = CacheDecision()


def decide(task: Any, context: Any, ask: Callable[[Any], Any] | None) -> CacheDecision:
    """Compute the key and ask for a stored result (task process side)."""
    key_fn = getattr(task, "cache_key_fn", None)
    if key_fn is None:
        return NO_CACHE
    try:
        raw = key_fn(context, call_arguments(task, context))
    except Exception as exc:
        problem = (f"cache_key_fn of task {task.task_id!r} raised {type(exc).__name__}: {exc}; "
                   "the task runs without the cache (nothing is read from or written to it)")
        log.exception(problem)
        return CacheDecision(problem=problem)
    if raw is None:
        log.info("cache_key_fn returned None: this call is not cached")
        return NO_CACHE
    if not isinstance(raw, str) or not raw:
        problem = (f"cache_key_fn of task {task.task_id!r} returned {raw!r}; a cache key must "
                   "be a non-empty string (or None for no caching). The task runs without the "
                   "cache (nothing is read from or written to it)")
        log.error(problem)
        return CacheDecision(problem=problem)
    key = raw if len(raw) <= _MAX_KEY else hashlib.sha256(raw.encode()).hexdigest()
    if ask is None:
        return CacheDecision(key=key)
    answer = ask(CacheLookup(context["ti"].dag_id, task.task_id, key))
    if isinstance(answer, CacheAnswer) and answer.hit:
        log.info("cache hit for key %s (stored %s): the task does not run", key,
                 answer.stored_at.isoformat() if answer.stored_at else "?")
        return CacheDecision(key=key, hit=True, value=answer.value)
    log.info("cache miss for key %s: the task runs", key)
    return CacheDecision(key=key)


def call_arguments(task: Any, context: Any) -> dict[str, Any]:
    """The task's call arguments with upstream results filled in: for a Python task, its
    function's parameters bound to ``op_args`` / ``op_kwargs``; otherwise its template fields.
    A mapped task's are those of this task instance's map index."""
    if getattr(task, "is_mapped", False):
        task = task.unmap(context)
    fields = {name: resolve_references(getattr(task, name, None), context)
              for name in getattr(task, "template_fields", ())}
    fn = getattr(task, "python_callable", None)
    if fn is not None and "op_args" in fields and "op_kwargs" in fields:
        args, kwargs = list(fields["op_args"] or ()), dict(fields["op_kwargs"] or {})
        try:
            return dict(inspect.signature(fn).bind_partial(*args, **kwargs).arguments)
        except (TypeError, ValueError):
            return {"args": args, "kwargs": kwargs}
    return fields


def store_info(task: Any, decision: CacheDecision) -> dict[str, Any] | None:
    """What the worker needs to store a successful result under the decision's key."""
    if decision.key is None or decision.hit:
        return None
    expiration: timedelta | None = getattr(task, "cache_expiration", None)
    return {"key": decision.key,
            "expires_in": expiration.total_seconds() if expiration is not None else None}


# -- the worker's side -------------------------------------------------------------------------


def lookup(conn: Connection, request: CacheLookup, now: datetime) -> CacheAnswer:
    row = cache_repo.lookup(conn, request.dag_id, request.task_id, request.cache_key, now)
    if row is None:
        return CacheAnswer(hit=False)
    return CacheAnswer(hit=True, value=row.value, stored_at=row.created_at)


def store_results(conn: Connection, results: Any, reached: dict[int, TaskInstanceState],
                  now: datetime) -> int:
    """Store the results of successful tries that computed a cache key (same transaction as
    their success)."""
    rows = []
    for r in results:
        info = (r.extra or {}).get(EXTRA_KEY)
        if not info or reached.get(r.ti_id) is not TI.SUCCESS or r.kind == "cached":
            continue
        expires_in = info.get("expires_in")
        rows.append({
            "dag_id": r.dag_id, "task_id": r.task_id, "cache_key": info["key"],
            "value": r.return_value, "created_at": now,
            "expires_at": now + timedelta(seconds=expires_in) if expires_in is not None else None,
            "run_id": r.run_id, "try_number": r.try_number,
        })
    cache_repo.store(conn, rows)
    return len(rows)
