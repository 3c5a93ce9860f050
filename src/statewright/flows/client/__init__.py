"""``get_client()``: a small client over statewright's flow runs, with the calls real Prefect
files make (``read_flow_runs``, ``read_flow_run``, ``read_artifacts``). ``get_client()`` is an
async context manager whose methods are coroutines; ``get_client(sync_client=True)`` a plain
one."""

from __future__ import annotations

import asyncio
from typing import Any

from statewright.flows import extras
from statewright.flows.client.schemas.objects import FlowRun, State, StateType

__all__ = ["PrefectClient", "SyncPrefectClient", "get_client"]

_TYPES = {"success": StateType.COMPLETED, "failed": StateType.FAILED,
          "running": StateType.RUNNING, "queued": StateType.PENDING,
          "cancelled": StateType.CANCELLED, "paused": StateType.PAUSED}


def _flow_run(row: dict[str, Any]) -> FlowRun:
    name = row.get("state_name") or "Pending"
    type_ = StateType.CRASHED if name == "Crashed" else _TYPES.get(row["state"], StateType.PENDING)
    return FlowRun(int(row["id"]), str(row["run_id"]), str(row["dag_id"]),
                   dict(row.get("conf") or {}), State(type=type_, name=name))


class SyncPrefectClient:
    def __enter__(self) -> SyncPrefectClient:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def read_flow_runs(self, *, limit: int | None = None, flow_name: str | None = None,
                       **_filters: Any) -> list[FlowRun]:
        """The latest flow runs first (Prefect's filters other than a flow's name are not
        applied)."""
        rows = extras.call("flow_runs", {"limit": limit, "dag_id": flow_name})
        return [_flow_run(r) for r in rows]

    def read_flow_run(self, flow_run_id: Any) -> FlowRun:
        rows = extras.call("flow_runs", {"id": int(flow_run_id), "limit": 1})
        if not rows:
            raise LookupError(f"Flow run {flow_run_id!r} not found.")
        return _flow_run(rows[0])

    def read_artifacts(self, flow_run_id: Any = None, **_: Any) -> list[dict[str, Any]]:
        run = flow_run_id if flow_run_id is not None else extras.run_keys()[0]
        found: list[dict[str, Any]] = extras.call("artifacts", run) if run is not None else []
        return found


class PrefectClient:
    """The async client: each call of the sync one, run in a thread."""

    def __init__(self) -> None:
        self._sync = SyncPrefectClient()

    async def __aenter__(self) -> PrefectClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._sync, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(method, *args, **kwargs)

        return call


def get_client(sync_client: bool = False, **_: Any) -> Any:
    return SyncPrefectClient() if sync_client else PrefectClient()
