"""``async def`` flows and tasks: their coroutines run on an event loop of their own.

The engine stays synchronous (every state is stored before the call returns). An async task
called in a flow is awaited (``await my_task(...)``): its run goes to a worker thread, where
its coroutine runs on a new event loop; ``.submit()`` / ``.map()`` run it on the flow's task
runner the same way. An async flow's coroutine runs on a new loop too, in a helper thread when
the caller's thread already runs one (``asyncio.run(my_flow())``).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from statewright.flows.timeouts import RunTimeout


def run_coro(coro: Coroutine[Any, Any, Any], seconds: float | None = None,
             what: str = "The run") -> Any:
    """Run ``coro`` to its end from synchronous code; ``seconds`` bounds it (``RunTimeout``)."""

    async def bounded() -> Any:
        if seconds is None:
            return await coro
        try:
            return await asyncio.wait_for(coro, seconds)
        except TimeoutError:
            raise RunTimeout(f"{what} exceeded timeout of {seconds} second(s)") from None

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(bounded())
    ctx = contextvars.copy_context()  # the flow run and its transaction go with it
    with ThreadPoolExecutor(1, thread_name_prefix="flow-async") as pool:
        return pool.submit(ctx.run, asyncio.run, bounded()).result()
