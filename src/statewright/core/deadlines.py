"""Deadline alerts: from a reference and an interval to the moment a run is late (pure).

A DAG's ``deadline`` (Airflow 3.1's ``DeadlineAlert``) is serialized as a list of dicts::

    {"reference": {"reference_type": "DagRunQueuedAtDeadline"}, "interval": 7200.0,
     "callback": {"kind": "async" | "sync", "path": "pkg.module.fn", "kwargs": {...}},
     "name": None}

When a run is created, each alert becomes a deadline: ``reference time + interval``. The
references, by Airflow's names:

- ``DagRunQueuedAtDeadline`` (``DAGRUN_QUEUED_AT``): when the run was queued;
- ``DagRunLogicalDateDeadline`` (``DAGRUN_LOGICAL_DATE``): the run's logical date (a run
  without one gets no deadline);
- ``FixedDatetimeDeadline`` (``FIXED_DATETIME(dt)``): a fixed moment (``datetime``: a POSIX
  timestamp);
- ``AverageRuntimeDeadline`` (``AVERAGE_RUNTIME(max_runs, min_runs)``): now plus the average
  duration of the DAG's last ``max_runs`` finished runs; fewer than ``min_runs`` of them: no
  deadline.

An interval is a ``timedelta`` (seconds once serialized). A negative interval is refused for
the references that count from the run (it would put the deadline before the run could start);
with ``FIXED_DATETIME`` it means "before that moment", as in Airflow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from statewright.core.errors import DagDefinitionError

QUEUED_AT = "DagRunQueuedAtDeadline"
LOGICAL_DATE = "DagRunLogicalDateDeadline"
FIXED_DATETIME = "FixedDatetimeDeadline"
AVERAGE_RUNTIME = "AverageRuntimeDeadline"
REFERENCES = (QUEUED_AT, LOGICAL_DATE, FIXED_DATETIME, AVERAGE_RUNTIME)
PUBLIC_NAMES = {QUEUED_AT: "DAGRUN_QUEUED_AT", LOGICAL_DATE: "DAGRUN_LOGICAL_DATE",
                FIXED_DATETIME: "FIXED_DATETIME", AVERAGE_RUNTIME: "AVERAGE_RUNTIME"}
CALLBACK_KINDS = ("async", "sync")
DEFAULT_MAX_RUNS = 10


@dataclass(frozen=True)
class Alert:
    """One serialized deadline alert, checked."""

    reference: str
    interval: timedelta
    callback: Mapping[str, Any]
    fixed: datetime | None = None
    max_runs: int = DEFAULT_MAX_RUNS
    min_runs: int = DEFAULT_MAX_RUNS
    name: str | None = None

    @property
    def public_name(self) -> str:
        return PUBLIC_NAMES[self.reference]


def check_alert(reference: str, interval: timedelta, *, max_runs: int = DEFAULT_MAX_RUNS,
                min_runs: int | None = None) -> None:
    """Raise ``DagDefinitionError`` for an alert that cannot work."""
    if reference not in REFERENCES:
        raise DagDefinitionError(
            f"DeadlineAlert reference {reference!r} does not exist; use one of "
            + ", ".join(f"DeadlineReference.{n}" for n in PUBLIC_NAMES.values()) + ".")
    if interval < timedelta(0) and reference != FIXED_DATETIME:
        raise DagDefinitionError(
            f"DeadlineAlert interval -{-interval} is negative: with "
            f"DeadlineReference.{PUBLIC_NAMES[reference]} the deadline would come before the "
            "run could start. Give a positive interval (only FIXED_DATETIME takes a negative "
            "one, meaning 'before that moment').")
    if reference == AVERAGE_RUNTIME:
        low = max_runs if min_runs is None else min_runs
        if max_runs < 1 or low < 1 or low > max_runs:
            raise DagDefinitionError(
                f"DeadlineReference.AVERAGE_RUNTIME(max_runs={max_runs}, min_runs={min_runs}): "
                "both must be at least 1 and min_runs at most max_runs.")


def parse_alerts(serialized: Sequence[Mapping[str, Any]] | None) -> list[Alert]:
    """The alerts of a serialized DAG's ``deadline`` list (checked again: the data may be old)."""
    out: list[Alert] = []
    for raw in serialized or ():
        ref = dict(raw.get("reference") or {})
        kind = str(ref.get("reference_type", ""))
        interval = timedelta(seconds=float(raw.get("interval", 0)))
        max_runs = int(ref.get("max_runs", DEFAULT_MAX_RUNS))
        min_runs = int(ref.get("min_runs", max_runs))
        check_alert(kind, interval, max_runs=max_runs, min_runs=min_runs)
        callback = dict(raw.get("callback") or {})
        if callback.get("kind") not in CALLBACK_KINDS or not callback.get("path"):
            raise DagDefinitionError(
                f"DeadlineAlert callback {callback!r} is not an AsyncCallback or SyncCallback.")
        fixed = (datetime.fromtimestamp(float(ref["datetime"]), UTC)
                 if kind == FIXED_DATETIME else None)
        out.append(Alert(kind, interval, callback, fixed, max_runs, min_runs, raw.get("name")))
    return out


def average_runtime(durations: Sequence[float], alert: Alert) -> float | None:
    """The average of the newest ``max_runs`` durations (newest first), or None when fewer than
    ``min_runs`` are known."""
    recent = list(durations)[: alert.max_runs]
    if len(recent) < alert.min_runs or not recent:
        return None
    return sum(recent) / len(recent)


def deadline_time(alert: Alert, *, queued_at: datetime | None, logical_date: datetime | None,
                  now: datetime, average_seconds: float | None = None) -> datetime | None:
    """When a run with these dates is late for ``alert`` (None: the alert does not apply)."""
    if alert.reference == QUEUED_AT:
        base = queued_at
    elif alert.reference == LOGICAL_DATE:
        base = logical_date
    elif alert.reference == FIXED_DATETIME:
        base = alert.fixed
    else:
        base = None if average_seconds is None else now + timedelta(seconds=average_seconds)
    return None if base is None else base + alert.interval


def is_missed(deadline: datetime, *, now: datetime, run_ended_at: datetime | None) -> bool:
    """A deadline is missed when it passed and the run had not ended by then."""
    if run_ended_at is not None and run_ended_at <= deadline:
        return False
    return now >= deadline
