"""``ExternalTaskSensor``: wait for a task, a task group (or a whole run) of another DAG.

Task code holds no database session, so this sensor cannot read another run's state itself.
It always defers to ``ExternalTaskTrigger``, which the triggerer runs with a read-only
*state reader* it hands to the trigger (a function over the database: the states of the task
instances, or of the DAG runs, of one DAG at the given logical dates; its ``group_states``
gives, for each of those runs, the states of the task instances of one task group). ``dag.test()``
hands it the same reader over its own database. ``mode`` is accepted for compatibility; the
worker slot is freed in every mode.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

from statewright.core.errors import DagDefinitionError
from statewright.sdk.exceptions import SkipTask
from statewright.sdk.operators.python import determine_kwargs
from statewright.sdk.sensors.base import BaseSensor
from statewright.sdk.triggers.base import BaseTrigger, TriggerEvent, classpath_of

__all__ = ["ExternalTaskSensor", "ExternalTaskTrigger", "StateReader"]

log = logging.getLogger(__name__)



class StateReader(Protocol):
    """What the triggerer hands to ``ExternalTaskTrigger`` (read-only)."""

    def __call__(self, dag_id: str, task_ids: list[str] | None,
                 logical_dates: list[datetime]) -> list[str]:
        """The states of the matching task instances (of the DAG runs when ``task_ids`` is
        None)."""

    def group_states(self, dag_id: str, task_group_id: str,
                     logical_dates: list[datetime]) -> list[list[str]]:
        """For each run of ``dag_id`` at ``logical_dates``, the states of the task instances
        of the tasks in ``task_group_id`` (its nested groups included)."""


class ExternalTaskTrigger(BaseTrigger):
    """Fire when the external task instances (or runs) reach an allowed, failed or skipped
    state. The payload is ``{"status": "success" | "failed" | "skipped", "states": [...]}``.

    With ``external_task_group_id`` a run counts as in a set of states when every task
    instance of the group in that run is (Airflow 3's rule): the trigger fails once the whole
    group of one run is in ``failed_states``, skips likewise, and succeeds once the group of
    every run is in ``allowed_states``.
    """

    #: The triggerer sets ``state_reader`` on triggers that ask for it.
    needs_state_reader = True

    def __init__(
        self,
        external_dag_id: str,
        logical_dates: list[datetime],
        external_task_ids: list[str] | None = None,
        allowed_states: list[str] | None = None,
        failed_states: list[str] | None = None,
        skipped_states: list[str] | None = None,
        poke_interval: float = 5.0,
        external_task_group_id: str | None = None,
    ) -> None:
        super().__init__()
        self.external_dag_id = external_dag_id
        self.external_task_group_id = external_task_group_id
        self.logical_dates = list(logical_dates)
        self.external_task_ids = list(external_task_ids) if external_task_ids else None
        self.allowed_states = list(allowed_states or ["success"])
        self.failed_states = list(failed_states or [])
        self.skipped_states = list(skipped_states or [])
        self.poke_interval = float(poke_interval)
        self.state_reader: StateReader | None = None

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return classpath_of(self), {
            "external_dag_id": self.external_dag_id,
            "logical_dates": self.logical_dates,
            "external_task_ids": self.external_task_ids,
            "allowed_states": self.allowed_states,
            "failed_states": self.failed_states,
            "skipped_states": self.skipped_states,
            "poke_interval": self.poke_interval,
            "external_task_group_id": self.external_task_group_id,
        }

    def decide(self, states: Sequence[str]) -> str | None:
        """``success`` / ``failed`` / ``skipped`` once decided, else None (pure)."""
        if any(s in self.failed_states for s in states):
            return "failed"
        if any(s in self.skipped_states for s in states):
            return "skipped"
        expected = len(self.logical_dates) * len(self.external_task_ids or [None])
        if sum(1 for s in states if s in self.allowed_states) >= expected:
            return "success"
        return None

    def decide_group(self, runs: Sequence[Sequence[str]]) -> str | None:
        """The same decision for a task group, from the states of each run's group (pure)."""

        def runs_all_in(states: list[str]) -> int:
            return sum(1 for run in runs if run and all(s in states for s in run))

        if self.failed_states and runs_all_in(self.failed_states):
            return "failed"
        if self.skipped_states and runs_all_in(self.skipped_states):
            return "skipped"
        if runs_all_in(self.allowed_states) >= len(self.logical_dates):
            return "success"
        return None

    async def run(self) -> AsyncIterator[TriggerEvent]:
        reader = self.state_reader
        if reader is None:
            raise RuntimeError(
                "ExternalTaskTrigger reads task states from the database: it runs in the "
                "triggerer (or dag.test()), which gives it a state reader; none was given")
        what = (f"task group {self.external_task_group_id}" if self.external_task_group_id
                else ", ".join(self.external_task_ids) if self.external_task_ids else "the run")
        while True:
            states, status = await asyncio.to_thread(self._read, reader)
            if status is not None:
                yield TriggerEvent({"status": status, "states": sorted(states)})
                return
            log.debug("trigger %s: %s of %s at %s: %s", self.trigger_id, what,
                      self.external_dag_id, self.logical_dates, states)
            await asyncio.sleep(self.poke_interval)

    def _read(self, reader: StateReader) -> tuple[list[str], str | None]:
        """The states read once, and the decision they make (None: not yet)."""
        if self.external_task_group_id is None:
            states = reader(self.external_dag_id, self.external_task_ids, self.logical_dates)
            return list(states), self.decide(states)
        runs = reader.group_states(self.external_dag_id, self.external_task_group_id,
                                   self.logical_dates)
        return [s for run in runs for s in run], self.decide_group(runs)


class ExternalTaskSensor(BaseSensor):
    """Wait for ``external_task_id`` / ``external_task_ids`` of ``external_dag_id``, or for
    every task of its task group ``external_task_group_id`` (or, with none of these, for its
    whole run) at the same logical date, or at the logical date shifted back by
    ``execution_delta``, or at the date(s) ``execution_date_fn(logical_date)`` returns.

    Done when every one is in ``allowed_states`` (default ``["success"]``); a state in
    ``failed_states`` fails the try (skips it with ``soft_fail``); one in ``skipped_states``
    skips it. For a task group, a run's group is failed (or skipped) once *all* its task
    instances are in ``failed_states`` (``skipped_states``), as in Airflow 3; a group the
    external DAG does not have is never done, and the sensor ends at its ``timeout``.
    """

    supports_deferral = True

    def __init__(
        self,
        *,
        external_dag_id: str,
        external_task_id: str | None = None,
        external_task_ids: Sequence[str] | None = None,
        external_task_group_id: str | None = None,
        allowed_states: Sequence[str] | None = None,
        failed_states: Sequence[str] | None = None,
        skipped_states: Sequence[str] | None = None,
        execution_delta: timedelta | None = None,
        execution_date_fn: Callable[..., Any] | None = None,
        poke_interval: timedelta | float = 5.0,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("deferrable", None)
        super().__init__(poke_interval=poke_interval, **kwargs)
        where = f"sensor {self.task_id!r}"
        if external_task_id is not None and external_task_ids is not None:
            raise DagDefinitionError(
                f"{where}: pass external_task_id or external_task_ids, not both")
        if execution_delta is not None and execution_date_fn is not None:
            raise DagDefinitionError(
                f"{where}: pass execution_delta or execution_date_fn, not both")
        self.external_dag_id = external_dag_id
        ids = [external_task_id] if external_task_id is not None else external_task_ids
        self.external_task_ids = list(ids) if ids else None
        self.external_task_group_id = _group_id(external_task_group_id, self.external_task_ids,
                                                where)
        self.allowed_states = list(allowed_states or ["success"])
        self.failed_states = list(failed_states or [])
        self.skipped_states = list(skipped_states or [])
        overlap = set(self.allowed_states) & (set(self.failed_states) | set(self.skipped_states))
        if overlap:
            raise DagDefinitionError(
                f"{where}: states {sorted(overlap)} are both allowed and failed/skipped")
        self.execution_delta = execution_delta
        self.execution_date_fn = execution_date_fn
        self.deferrable = True

    def logical_dates(self, context: Any) -> list[datetime]:
        logical_date = context.get("logical_date")
        if logical_date is None:
            raise RuntimeError(
                f"sensor {self.task_id!r}: this run has no logical date, so there is no "
                "external run to match; give the run a logical date")
        if self.execution_delta is not None:
            return [logical_date - self.execution_delta]
        if self.execution_date_fn is not None:
            fn = self.execution_date_fn
            result = fn(logical_date, **determine_kwargs(fn, [logical_date], context))
            return list(result) if isinstance(result, (list, tuple)) else [result]
        return [logical_date]

    def poke(self, context: Any) -> bool:
        raise NotImplementedError(
            "ExternalTaskSensor waits through the triggerer; it has no poke in the task")

    def execute_deferrable(self, context: Any) -> Any:
        trigger = ExternalTaskTrigger(
            self.external_dag_id, self.logical_dates(context), self.external_task_ids,
            self.allowed_states, self.failed_states, self.skipped_states,
            poke_interval=max(self.poke_interval, 0.01),
            external_task_group_id=self.external_task_group_id)
        self.defer(trigger=trigger, method_name="execute_complete",
                   timeout=timedelta(seconds=self.timeout))

    def execute_complete(self, context: Any, event: Any = None) -> Any:
        event = event or {}
        status = event.get("status")
        what = (f"task group {self.external_task_group_id} of" if self.external_task_group_id
                else f"{', '.join(self.external_task_ids)} of" if self.external_task_ids
                else "the run of")
        if status == "skipped":
            raise SkipTask(f"{what} {self.external_dag_id} was skipped ({event.get('states')})")
        if status == "failed":
            message = f"{what} {self.external_dag_id} failed ({event.get('states')})"
            if self.soft_fail:
                raise SkipTask(f"soft_fail: {message}")
            raise RuntimeError(message)
        return None


def _group_id(group_id: Any, task_ids: list[str] | None, where: str) -> str | None:
    """``external_task_group_id``, checked: a non-empty string, and not with task ids."""
    if group_id is None:
        return None
    if task_ids is not None:
        raise DagDefinitionError(
            f"{where}: pass external_task_group_id or external_task_id(s), not both: the "
            "sensor waits for a task group or for tasks")
    if not isinstance(group_id, str) or not group_id:
        raise DagDefinitionError(
            f"{where}: external_task_group_id must be the id of a task group of "
            f"the external DAG (a non-empty string), got {group_id!r}")
    return group_id
