"""Where a flow run's states go: the backend a top-level flow run opens.

A program hands one in with ``use_backend`` (a factory called once per top-level flow run).
Otherwise ``STATEWRIGHT_FLOWS_BACKEND=memory`` keeps states in memory, and by default a recorder
process is started beside the flow's process: it holds the database session, applies every
state change through the one door, heartbeats the run, and ends it ``Crashed`` when the flow's
process dies without finishing it (SIGKILL).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from statewright.flows.backend import Backend, MemoryBackend
from statewright.flows.run_info import deployment, flow_run, task_run  # prefect.runtime's

__all__ = ["deployment", "flow_run", "open_backend", "task_run", "use_backend"]

_factory: Callable[[], Backend] | None = None


def use_backend(factory: Callable[[], Backend] | None) -> None:
    """Send the states of the flow runs this process starts to ``factory()``'s backend;
    ``None`` returns to the default."""
    global _factory
    _factory = factory


def open_backend() -> Backend:
    if _factory is not None:
        return _factory()
    choice = os.environ.get("STATEWRIGHT_FLOWS_BACKEND", "recorder").strip().lower()
    if choice == "memory":
        return MemoryBackend()
    if choice != "recorder":
        raise ValueError(
            f"STATEWRIGHT_FLOWS_BACKEND={choice!r} is not a backend: use 'recorder' (the "
            "default: states recorded in the database) or 'memory'."
        )
    from statewright.flows.remote import RecorderClient

    return RecorderClient.start()
