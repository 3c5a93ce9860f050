"""``prefect.concurrency.asyncio``: ``async with concurrency(...)`` (waiting in a thread)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from statewright.flows.concurrency import ConcurrencySlotAcquisitionError, acquire, release

__all__ = ["ConcurrencySlotAcquisitionError", "concurrency"]


@contextlib.asynccontextmanager
async def concurrency(names: str | list[str], occupy: int = 1,
                      timeout_seconds: float | None = None, max_retries: int | None = None,
                      strict: bool = False, **_: object) -> AsyncIterator[None]:
    wanted = [names] if isinstance(names, str) else list(names)
    ids = await asyncio.to_thread(acquire, wanted, occupy, timeout_seconds, strict)
    try:
        yield
    finally:
        if ids:
            await asyncio.to_thread(release, wanted, ids, occupy)
