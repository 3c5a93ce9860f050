"""Cache key functions for ``@task(cache_key_fn=..., cache_expiration=...)`` (Prefect's Cached);
see ``statewright.core.caching`` (kept there so that flows need not import the SDK)."""

from __future__ import annotations

from statewright.core.caching import task_input_hash

__all__ = ["task_input_hash"]
