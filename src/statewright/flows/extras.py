"""What a flow file asks of the database beside states: blocks, variables, artifacts,
events, concurrency limits, reads of flow runs. Each is one ``extra`` request to the flow
run's recorder (``statewright.services.flows.extras`` answers it in a transaction); outside a
flow run, a recorder is started for the process on first use. With the memory backend, the
answers come from this process's memory."""

from __future__ import annotations

import atexit
import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from statewright.flows.context import flow_run_ctx, task_run_ctx

FLOW_RUN_TASK_ID = "__flow_run__"


@dataclass
class MemoryExtras:
    """The answers of a process whose flow runs are not recorded."""

    variables: dict[str, str] = field(default_factory=dict)
    artifacts: dict[int | None, list[dict[str, Any]]] = field(default_factory=dict)
    events: list[tuple[Any, ...]] = field(default_factory=list)
    pools: dict[str, int] = field(default_factory=dict)
    leases: dict[int, tuple[str, int]] = field(default_factory=dict)
    _lease_ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _lease_take(self, names: list[str], occupy: int, _holder: str,
                    _seconds: float) -> list[int] | None:
        with self._lock:
            used: dict[str, int] = {}
            for pool, slots in self.leases.values():
                used[pool] = used.get(pool, 0) + slots
            known = [n for n in names if n in self.pools]
            if any(used.get(n, 0) + occupy > self.pools[n] for n in known):
                return None
            ids = []
            for name in known:
                ids.append(next(self._lease_ids))
                self.leases[ids[-1]] = (name, occupy)
            return ids

    def handle(self, name: str, payload: Any) -> Any:
        if name == "var_get":
            return self.variables.get(payload)
        if name == "var_put":
            created = payload[0] not in self.variables
            self.variables[payload[0]] = payload[1]
            return created
        if name == "var_delete":
            return self.variables.pop(payload, None) is not None
        if name == "artifact":
            run_pk, task_id, _key, value = payload
            self.artifacts.setdefault(run_pk, []).append({"task_run": task_id, **value})
            return None
        if name == "artifacts":
            return list(self.artifacts.get(payload, []))
        if name == "event":
            self.events.append(payload)
            return None
        if name == "pool":
            return self.pools.get(payload)
        if name == "flow_runs":
            return []
        if name == "lease_take":
            return self._lease_take(*payload)
        if name == "lease_release":
            for lease_id in payload or []:
                self.leases.pop(lease_id, None)
            return None
        raise ValueError(f"{name!r} is not an extra request.")


memory = MemoryExtras()
_lock = threading.Lock()
_own: Any = None  # the recorder this process started for calls outside a flow run


def _backend() -> Any:
    task = task_run_ctx.get()
    flow = task.flow_run_context if task is not None else flow_run_ctx.get()
    if flow is not None:
        return flow.backend
    from statewright.flows import runtime

    if runtime._factory is not None:  # a program's own backend (tests): asked each time
        return runtime._factory()
    global _own
    with _lock:
        if _own is None:
            _own = runtime.open_backend()
            atexit.register(_close_own)
        return _own


def _close_own() -> None:
    global _own
    if _own is not None:
        try:
            _own.close(finished=True)
        finally:
            _own = None


def call(name: str, payload: Any) -> Any:
    """Ask the recorder (or the memory) ``name`` with ``payload``; its answer."""
    backend = _backend()
    request = getattr(backend, "request", None)
    if request is None:
        return memory.handle(name, payload)
    return request("extra", (name, payload))


def run_keys() -> tuple[int | None, str | None, str | None]:
    """(flow run pk, task run name, flow name) of the code calling, each None outside."""
    task = task_run_ctx.get()
    if task is not None:
        return (task.task_run.flow_run_id, task.task_run.name,
                task.flow_run_context.flow_run.flow_name)
    flow = flow_run_ctx.get()
    if flow is not None:
        return flow.flow_run.id, None, flow.flow_run.flow_name
    return None, None, None
