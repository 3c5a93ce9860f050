"""Deadline alerts on a DAG, by Airflow 3.1's names (``airflow.sdk.definitions.deadline``)::

    DAG("daily", deadline=DeadlineAlert(
        reference=DeadlineReference.DAGRUN_QUEUED_AT, interval=timedelta(hours=2),
        callback=AsyncCallback(notify, kwargs={"channel": "#data"})))

When a run is created, each alert's deadline is stored with it; when the deadline passes and the
run has not ended, the alert is recorded as missed and its callback is called once with its
``kwargs`` and ``context`` (the run, the deadline). A run that ends in time cancels its
deadlines. The rules (reference → time, what is refused) are in ``statewright.core.deadlines``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from statewright.core import deadlines as rules
from statewright.core.errors import DagDefinitionError

__all__ = ["AsyncCallback", "DeadlineAlert", "DeadlineReference", "SyncCallback"]


@dataclass(frozen=True)
class _Reference:
    reference_type: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def serialize_reference(self) -> dict[str, Any]:
        return {"reference_type": self.reference_type, **self.data}

    @property
    def reference_name(self) -> str:
        return self.reference_type


class DeadlineReference:
    """What a deadline counts from (Airflow's ``DeadlineReference``)."""

    DAGRUN_QUEUED_AT = _Reference(rules.QUEUED_AT)
    DAGRUN_LOGICAL_DATE = _Reference(rules.LOGICAL_DATE)

    @staticmethod
    def FIXED_DATETIME(dt: datetime) -> _Reference:
        if not isinstance(dt, datetime):
            raise DagDefinitionError(
                f"DeadlineReference.FIXED_DATETIME needs a datetime, got {dt!r}.")
        moment = dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)
        return _Reference(rules.FIXED_DATETIME, {"datetime": moment.timestamp()})

    @staticmethod
    def AVERAGE_RUNTIME(max_runs: int = 0, min_runs: int | None = None
                        ) -> _Reference:
        max_runs = max_runs or rules.DEFAULT_MAX_RUNS
        low = max_runs if min_runs is None else min_runs
        rules.check_alert(rules.AVERAGE_RUNTIME, timedelta(0), max_runs=max_runs, min_runs=low)
        return _Reference(rules.AVERAGE_RUNTIME, {"max_runs": max_runs, "min_runs": low})


class _Callback:
    kind = ""

    def __init__(self, callback_callable: Callable[..., Any] | str,
                 kwargs: Mapping[str, Any] | None = None) -> None:
        if isinstance(callback_callable, str):
            self.callback_callable: Callable[..., Any] | None = None
            self.path = callback_callable
        elif callable(callback_callable):
            self.callback_callable = callback_callable
            self.path = (f"{getattr(callback_callable, '__module__', '')}."
                         f"{getattr(callback_callable, '__qualname__', repr(callback_callable))}")
        else:
            raise DagDefinitionError(
                f"{type(self).__name__} needs a callable or its import path, got "
                f"{callback_callable!r}.")
        self.kwargs = dict(kwargs or {})

    def serialize(self) -> dict[str, Any]:
        from statewright.sdk._validation import check_json

        check_json(self.kwargs, f"{type(self).__name__} kwargs")
        return {"kind": self.kind, "path": self.path, "kwargs": self.kwargs}


class AsyncCallback(_Callback):
    """A coroutine function (or a callable) called when a deadline is missed."""

    kind = "async"


class SyncCallback(_Callback):
    """A plain callable called when a deadline is missed."""

    kind = "sync"


class DeadlineAlert:
    """``reference`` + ``interval`` → the deadline; ``callback`` is called if it is missed."""

    def __init__(self, reference: Any, interval: timedelta, callback: Any,
                 name: str | None = None) -> None:
        if not isinstance(reference, _Reference):
            raise DagDefinitionError(
                f"DeadlineAlert reference {reference!r} does not exist; use one of "
                + ", ".join(f"DeadlineReference.{n}" for n in rules.PUBLIC_NAMES.values())
                + ".")
        if not isinstance(interval, timedelta):
            raise DagDefinitionError(
                f"DeadlineAlert interval must be a timedelta, got {interval!r}.")
        ref = reference.serialize_reference()
        rules.check_alert(reference.reference_type, interval,
                          max_runs=int(ref.get("max_runs", rules.DEFAULT_MAX_RUNS)),
                          min_runs=ref.get("min_runs"))
        if not isinstance(callback, _Callback):
            raise DagDefinitionError(
                f"DeadlineAlert callback must be an AsyncCallback or a SyncCallback, got "
                f"{type(callback).__name__}.")
        self.reference, self.interval, self.callback, self.name = (
            reference, interval, callback, name)

    def serialize(self) -> dict[str, Any]:
        return {"reference": self.reference.serialize_reference(),
                "interval": self.interval.total_seconds(), "callback": self.callback.serialize(),
                "name": self.name}


def to_deadline_list(value: Any, where: str) -> list[DeadlineAlert]:
    """``DAG(deadline=...)``: None, one alert or a list of alerts."""
    if value is None:
        return []
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if not isinstance(item, DeadlineAlert):
            raise DagDefinitionError(
                f"{where}: deadline must be a DeadlineAlert or a list of them, got {item!r}.")
    return items
