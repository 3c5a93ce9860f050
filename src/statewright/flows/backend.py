"""What a running flow asks of the place its states are kept.

The flow engine (``statewright.flows.engine``) knows only this protocol. The recorder of
``statewright.services.flows`` implements it over the database's one door, in a process of its
own (the flow's process holds no database session); ``MemoryBackend`` keeps states in memory for
a flow run that nothing is to record. Every request is a plain, picklable dataclass, so it
can cross a pipe; every call returns once the change is stored.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True)
class FlowRunStart:
    flow_name: str
    run_name: str | None
    parameters: dict[str, Any]
    fileloc: str | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()
    parent_task_run: int | None = None
    adopt_run: int | None = None
    """A queued run created for this process (a served flow's scheduled run)."""
    pid: int | None = None
    hostname: str | None = None
    entrypoint: str | None = None
    """``path/to/file.py:function`` when the flow is a module's function: what the scheduler
    starts for a run of the flow triggered from the UI, the API or the CLI."""
    durable: bool = False
    retries: int = 0
    params_spec: dict[str, Any] | None = None
    """The flow's parameters as params (``statewright.flows.parameters``): the trigger form."""


@dataclass(frozen=True)
class FlowRunHandle:
    run_pk: int
    run_id: str
    flow_name: str
    log_template: str | None = None
    """Where a task run's try logs: ``{task_id}`` and ``{try_number}`` to fill in."""
    taken: frozenset[str] = frozenset()
    """Task run names the run already has (a resumed run that runs again): new task runs
    take the next dynamic keys."""
    replay: bool = False
    """A durable run resumed after a crash: each task call at a position whose result was
    recorded returns it instead of running (the names are those of the first run)."""
    tries: Mapping[str, int] = field(default_factory=dict)
    """A resumed durable run's task runs that run again: name → the tries they have had."""


@dataclass(frozen=True)
class TaskRunStart:
    run_pk: int
    task_run_name: str
    task_key: str
    max_tries: int
    tags: tuple[str, ...] = ()
    pid: int | None = None
    hostname: str | None = None
    run: bool = True
    """Start it (Pending → Running) at once; False leaves it Pending."""


@dataclass(frozen=True)
class Change:
    """One state change. ``to`` is a task instance state (for task runs) or a DAG run state (for
    flow runs) of ``statewright.core.states``; ``name`` its Prefect name."""

    pk: int
    frm: str
    to: str
    name: str
    message: str | None = None
    try_number: int | None = None
    increment_try: bool = False
    next_retry_at: datetime | None = None


@dataclass(frozen=True)
class Note:
    """A line in a run's history that changes no state (a hook that raised)."""

    kind: str  # "task" or "flow"
    pk: int
    message: str


@dataclass(frozen=True)
class Pause:
    """``pause_flow_run`` / ``suspend_flow_run``: the run goes ``paused`` (``name``) waiting
    for the input whose JSON schema is ``schema`` (None: no input, a resume is enough)."""

    run_pk: int
    name: str
    key: str
    schema: dict[str, Any] | None = None
    message: str | None = None


@dataclass(frozen=True)
class PauseKey:
    run_pk: int
    key: str


@dataclass(frozen=True)
class CacheEntry:
    flow_name: str
    task_key: str
    key: str
    value: Any = None
    expires_at: datetime | None = None
    run_id: str | None = None
    try_number: int | None = None


@dataclass(frozen=True)
class Step:
    """A durable run's completed task call: its final state and its recorded result (the
    inputs' digest and the stored value), written in one transaction."""

    change: Change
    entry: CacheEntry


@dataclass(frozen=True)
class Deployment:
    """``flow.serve(...)``: the flow, its entrypoint and its schedule (a cron string or a
    number of seconds)."""

    flow_name: str
    name: str
    entrypoint: str
    parameters: dict[str, Any]
    cron: str | None = None
    interval_seconds: float | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()
    paused: bool = False


@dataclass(frozen=True)
class QueuedRun:
    run_pk: int
    run_id: str
    parameters: dict[str, Any]


class Backend(Protocol):
    def start_flow_run(self, req: FlowRunStart) -> FlowRunHandle: ...

    def start_task_run(self, req: TaskRunStart) -> int: ...

    def task_state(self, change: Change) -> None: ...

    def flow_state(self, change: Change) -> None: ...

    def flow_run_state(self, run_pk: int) -> tuple[str, str]: ...

    def note(self, note: Note) -> None: ...

    def pause(self, pause: Pause) -> None: ...

    def pause_input(self, key: PauseKey) -> tuple[bool, Any]: ...

    def cache_get(self, entry: CacheEntry) -> tuple[bool, Any]: ...

    def cache_put(self, entry: CacheEntry) -> None: ...

    def record_step(self, step: Step) -> None: ...

    def register_deployment(self, deployment: Deployment) -> None: ...

    def queued_runs(self, flow_name: str) -> list[QueuedRun]: ...

    def close(self, *, finished: bool) -> None: ...


class RequestBackend:
    """A backend whose every call is one named request (``request(method, arg)``): the
    recorder's client sends it down a pipe, the recorder applies it in a transaction."""

    def request(self, method: str, arg: Any) -> Any:
        raise NotImplementedError

    def start_flow_run(self, req: FlowRunStart) -> FlowRunHandle:
        handle: FlowRunHandle = self.request("start_flow_run", req)
        return handle

    def start_task_run(self, req: TaskRunStart) -> int:
        return int(self.request("start_task_run", req))

    def task_state(self, change: Change) -> None:
        self.request("task_state", change)

    def flow_state(self, change: Change) -> None:
        self.request("flow_state", change)

    def flow_run_state(self, run_pk: int) -> tuple[str, str]:
        state, name = self.request("flow_run_state", run_pk)
        return str(state), str(name)

    def cache_get(self, entry: CacheEntry) -> tuple[bool, Any]:
        hit, value = self.request("cache_get", entry)
        return bool(hit), value

    def cache_put(self, entry: CacheEntry) -> None:
        self.request("cache_put", entry)

    def record_step(self, step: Step) -> None:
        self.request("record_step", step)

    def note(self, note: Note) -> None:
        self.request("note", note)

    def pause(self, pause: Pause) -> None:
        self.request("pause", pause)

    def pause_input(self, key: PauseKey) -> tuple[bool, Any]:
        done, value = self.request("pause_input", key)
        return bool(done), value

    def register_deployment(self, deployment: Deployment) -> None:
        self.request("register_deployment", deployment)

    def queued_runs(self, flow_name: str) -> list[QueuedRun]:
        return list(self.request("queued_runs", flow_name))


@dataclass
class MemoryBackend:
    """States kept in memory: ``history`` lists every change, as the recorder would store it."""

    history: list[tuple[str, int, str, str]] = field(default_factory=list)
    runs: dict[int, tuple[str, str]] = field(default_factory=dict)
    deployments: dict[str, Deployment] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _cache: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    wanted: dict[int, Pause] = field(default_factory=dict)
    inputs: dict[tuple[int, str], Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start_flow_run(self, req: FlowRunStart) -> FlowRunHandle:
        with self._lock:
            pk = next(self._ids)
            self.runs[pk] = ("running", "Running")
            self.history += [("flow", pk, "queued", "Pending"), ("flow", pk, "running", "Running")]
        return FlowRunHandle(pk, req.run_name or f"{req.flow_name}-{pk}", req.flow_name)

    def start_task_run(self, req: TaskRunStart) -> int:
        with self._lock:
            pk = next(self._ids)
            self.history.append(("task", pk, "none", "Pending"))
            if req.run:
                self.history.append(("task", pk, "running", "Running"))
        return pk

    def task_state(self, change: Change) -> None:
        with self._lock:
            self.history.append(("task", change.pk, change.to, change.name))

    def flow_state(self, change: Change) -> None:
        with self._lock:
            self.runs[change.pk] = (change.to, change.name)
            self.history.append(("flow", change.pk, change.to, change.name))

    def flow_run_state(self, run_pk: int) -> tuple[str, str]:
        with self._lock:
            return self.runs[run_pk]

    def cache_get(self, entry: CacheEntry) -> tuple[bool, Any]:
        key = (entry.flow_name, entry.task_key, entry.key)
        with self._lock:
            if key in self._cache:
                return True, self._cache[key]
        return False, None

    def cache_put(self, entry: CacheEntry) -> None:
        with self._lock:
            self._cache[(entry.flow_name, entry.task_key, entry.key)] = entry.value

    def record_step(self, step: Step) -> None:
        self.task_state(step.change)
        self.cache_put(step.entry)

    def note(self, note: Note) -> None:
        with self._lock:
            self.notes.append(note)

    def pause(self, pause: Pause) -> None:
        with self._lock:
            self.wanted[pause.run_pk] = pause
        self.flow_state(Change(pause.run_pk, "running", "paused", pause.name, pause.message))

    def pause_input(self, key: PauseKey) -> tuple[bool, Any]:
        with self._lock:
            done = (key.run_pk, key.key) in self.inputs
            return done, self.inputs.get((key.run_pk, key.key))

    def resume(self, run_pk: int, value: Any = None) -> None:
        """What a person's resume does (the input is not checked here)."""
        with self._lock:
            pause = self.wanted.pop(run_pk)
            self.inputs[(run_pk, pause.key)] = value
        self.flow_state(Change(run_pk, "paused", "running", "Running"))

    def register_deployment(self, deployment: Deployment) -> None:
        with self._lock:
            self.deployments[deployment.flow_name] = deployment

    def queued_runs(self, flow_name: str) -> list[QueuedRun]:
        return []

    def close(self, *, finished: bool) -> None:
        return None
