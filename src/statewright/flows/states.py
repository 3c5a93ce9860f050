"""Prefect's state objects: a type that drives logic, a name a person reads, a message and data.

``Completed``, ``Failed``, ``Cancelled`` … build states a task or flow may return to decide its own
final state; ``return_state=True`` hands them back from a call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol


class StateType(StrEnum):
    """Prefect 3's state types."""

    SCHEDULED = "SCHEDULED"
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    CRASHED = "CRASHED"
    PAUSED = "PAUSED"
    CANCELLING = "CANCELLING"


TERMINAL_STATE_TYPES = frozenset(
    {StateType.COMPLETED, StateType.FAILED, StateType.CANCELLED, StateType.CRASHED}
)


class UnfinishedRun(Exception):
    """``result()`` of a state that has not finished."""


@dataclass
class State:
    """One state of a task run or flow run."""

    type: StateType
    name: str | None = None
    message: str | None = None
    data: Any = None
    timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))
    state_details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.type, StateType):
            self.type = StateType(self.type)
        if self.name is None:
            self.name = self.type.value.title()

    def is_scheduled(self) -> bool:
        return self.type is StateType.SCHEDULED

    def is_pending(self) -> bool:
        return self.type is StateType.PENDING

    def is_running(self) -> bool:
        return self.type is StateType.RUNNING

    def is_completed(self) -> bool:
        return self.type is StateType.COMPLETED

    def is_failed(self) -> bool:
        return self.type is StateType.FAILED

    def is_crashed(self) -> bool:
        return self.type is StateType.CRASHED

    def is_cancelled(self) -> bool:
        return self.type is StateType.CANCELLED

    def is_paused(self) -> bool:
        return self.type is StateType.PAUSED

    def is_final(self) -> bool:
        return self.type in TERMINAL_STATE_TYPES

    def result(self, raise_on_failure: bool = True) -> Any:
        """The value of a completed state; a failed, crashed or cancelled one raises its
        exception (or returns it when ``raise_on_failure=False``)."""
        if self.is_completed():
            return self.data
        if not self.is_final():
            raise UnfinishedRun(f"Run is in {self.type.value} state, its result is not available.")
        exc = self.data if isinstance(self.data, BaseException) else _state_error(self)
        if raise_on_failure:
            raise exc
        return exc

    def __repr__(self) -> str:
        return f"{self.name}(message={self.message!r}, type={self.type.value})"


class FailedRun(Exception):
    """A run failed (or was cancelled) without an exception of its own to raise."""


class CancelledRun(FailedRun):
    """The result of a cancelled run."""


class CrashedRun(FailedRun):
    """The result of a crashed run."""


def _state_error(state: State) -> BaseException:
    cls = {StateType.CANCELLED: CancelledRun, StateType.CRASHED: CrashedRun}.get(
        state.type, FailedRun
    )
    return cls(state.message or f"Run ended in state {state.name}.")


class StateFactory(Protocol):
    def __call__(self, message: str | None = None, data: Any = None, name: str | None = None,
                 **details: Any) -> State: ...


def _make(type_: StateType, default_name: str) -> StateFactory:
    def build(
        message: str | None = None, data: Any = None, name: str | None = None, **details: Any
    ) -> State:
        return State(type_, name or default_name, message, data, state_details=details)

    build.__name__ = build.__qualname__ = default_name
    build.__doc__ = f"A ``{default_name}`` state (type {type_.value})."
    return build


Scheduled = _make(StateType.SCHEDULED, "Scheduled")
Late = _make(StateType.SCHEDULED, "Late")
AwaitingRetry = _make(StateType.SCHEDULED, "AwaitingRetry")
Pending = _make(StateType.PENDING, "Pending")
Running = _make(StateType.RUNNING, "Running")
Retrying = _make(StateType.RUNNING, "Retrying")
Paused = _make(StateType.PAUSED, "Paused")
Suspended = _make(StateType.PAUSED, "Suspended")
Cancelling = _make(StateType.CANCELLING, "Cancelling")
Cancelled = _make(StateType.CANCELLED, "Cancelled")
Completed = _make(StateType.COMPLETED, "Completed")
Cached = _make(StateType.COMPLETED, "Cached")
RolledBack = _make(StateType.COMPLETED, "RolledBack")
Failed = _make(StateType.FAILED, "Failed")
Crashed = _make(StateType.CRASHED, "Crashed")
TimedOut = _make(StateType.FAILED, "TimedOut")


class UnknownStateType(TypeError):
    """A flow or task returned a state-like object this engine does not know."""


def is_state(value: Any) -> bool:
    return isinstance(value, State)


def is_state_iterable(value: Any) -> bool:
    """A list, tuple, set or dict values made only of states (Prefect's rule for flows)."""
    if isinstance(value, dict):
        value = list(value.values())
    if not isinstance(value, list | tuple | set | frozenset) or not value:
        return False
    return all(isinstance(v, State) for v in value)


def check_returned_state(value: Any) -> None:
    """Refuse an object that claims to be a state but is none of ours: it would decide the
    final state in a way nobody can read."""
    if isinstance(value, State):
        return
    kind = type(value)
    if kind.__name__ in _STATE_CLASS_NAMES or (
        hasattr(value, "type") and hasattr(value, "is_failed") and hasattr(value, "result")
    ):
        raise UnknownStateType(
            f"The run returned {kind.__module__}.{kind.__qualname__}, a state of a type this "
            "engine does not know. Return a state built with statewright.flows' constructors "
            "(Completed(), Failed(), Cancelled()), or a plain value."
        )


_STATE_CLASS_NAMES = frozenset({"State"})


def final_state_of_return(value: Any) -> State:
    """Prefect's "Flow return values" rules for a flow that returned without raising."""
    check_returned_state(value)
    if isinstance(value, State):
        return value
    if is_state_iterable(value):
        return _state_of_states(list(value.values() if isinstance(value, dict) else value), value)
    return Completed(data=value)


def task_state_of_return(value: Any) -> State:
    """Prefect's "Task return values": any object completes, a returned state is used."""
    check_returned_state(value)
    if isinstance(value, State):
        return value
    return Completed(data=value)


def _state_of_states(states: list[State], data: Any) -> State:
    """Prefect's rule for an iterable of states: all completed → Completed; any cancelled →
    Cancelled; any paused → Paused; otherwise Failed."""
    total = len(states)
    if all(s.is_completed() for s in states):
        return Completed(message="All states completed.", data=data)
    cancelled = sum(s.is_cancelled() for s in states)
    if cancelled:
        return Cancelled(message=f"{cancelled}/{total} states cancelled.", data=data)
    paused = sum(s.is_paused() for s in states)
    if paused:
        return Paused(message=f"{paused}/{total} states paused.", data=data)
    failed = sum(s.is_failed() or s.is_crashed() for s in states)
    if failed:
        return Failed(message=f"{failed}/{total} states failed.", data=data)
    unfinished = sum(not s.is_final() for s in states)
    return Failed(message=f"{unfinished}/{total} states are not final.", data=data)
