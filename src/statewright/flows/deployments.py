"""``prefect.deployments.run_deployment``: a run of a served flow's deployment, by name
(``"flow-name/deployment-name"``), started by the scheduler through its serving process; by
default it waits for the run to end and returns it (``timeout=0``: at once)."""

from __future__ import annotations

import time
from typing import Any

from statewright.flows import extras
from statewright.flows.client import SyncPrefectClient
from statewright.flows.client.schemas.objects import FlowRun

__all__ = ["run_deployment"]

POLL_SECONDS = 1.0


def run_deployment(name: str, parameters: dict[str, Any] | None = None,
                   timeout: float | None = None, poll_interval: float = POLL_SECONDS,
                   as_subflow: bool = True, **_: Any) -> FlowRun:
    created = extras.call("run_deployment", (name, dict(parameters or {})))
    client = SyncPrefectClient()
    run = client.read_flow_run(created["id"])
    deadline = None if timeout is None else time.monotonic() + timeout
    while run.state is not None and not run.state.is_final():
        if deadline is not None and time.monotonic() >= deadline:
            break
        time.sleep(poll_interval)
        run = client.read_flow_run(created["id"])
    return run
