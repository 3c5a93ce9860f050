"""``ExternalTaskSensor``: wait for a task (or a whole run) of another DAG.

Task code holds no database session, so this sensor cannot read another run's state itself.
It always defers to ``ExternalTaskTrigger``, which the triggerer runs with a read-only
*state reader* it hands to the trigger (a function over the database: the states of the task
instances, or of the DAG runs, of one DAG at the given logical dates). ``dag.test()`` hands it
the same reader over its own database. ``mode`` is accepted for compatibility; the worker slot
is freed in every mode.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.sdk.exceptions import SkipTask
from statewright.sdk.operators.python import determine_kwargs
from statewright.sdk.sensors.base import BaseSensor
from statewright.sdk.triggers.base import BaseTrigger, TriggerEvent, classpath_of

__all__ = ["ExternalTaskSensor", "ExternalTaskTrigger", "StateReader"]

log = logging.getLogger(__name__)

#: ``reader(dag_id, task_ids or None, logical_dates) -> states``: the states of the matching
#: task instances (or of the DAG runs when ``task_ids`` is None).
StateReader = Callable[[str, "list[str] | None", "list[datetime]"], "list[str]"]


class ExternalTaskTrigger(BaseTrigger):
    """Fire when the external task instances (or runs) reach an allowed, failed or skipped
    state. The payload is ``{"status": "success" | "failed" | "skipped", "states": [...]}``."""

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
    ) -> None:
        super().__init__()
        self.external_dag_id = external_dag_id
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

    async def run(self) -> AsyncIterator[TriggerEvent]:
        reader = self.state_reader
        if reader is None:
            raise RuntimeError(
                "ExternalTaskTrigger reads task states from the database: it runs in the "
                "triggerer (or dag.test()), which gives it a state reader; none was given")
        what = ", ".join(self.external_task_ids) if self.external_task_ids else "the run"
        while True:
            states = await asyncio.to_thread(reader, self.external_dag_id,
                                             self.external_task_ids, self.logical_dates)
            status = self.decide(states)
            if status is not None:
                yield TriggerEvent({"status": status, "states": sorted(states)})
                return
            log.debug("trigger %s: %s of %s at %s: %s", self.trigger_id, what,
                      self.external_dag_id, self.logical_dates, states)
            await asyncio.sleep(self.poke_interval)


class ExternalTaskSensor(BaseSensor):
    """Wait for ``external_task_id`` / ``external_task_ids`` of ``external_dag_id`` (or, with
    neither, for its whole run) at the same logical date, or at the logical date shifted back
    by ``execution_delta``, or at the date(s) ``execution_date_fn(logical_date)`` returns.

    Done when every one is in ``allowed_states`` (default ``["success"]``); a state in
    ``failed_states`` fails the try (skips it with ``soft_fail``); one in ``skipped_states``
    skips it.
    """

    supports_deferral = True

    def __init__(
        self,
        *,
        external_dag_id: str,
        external_task_id: str | None = None,
        external_task_ids: Sequence[str] | None = None,
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
            poke_interval=max(self.poke_interval, 0.01))
        self.defer(trigger=trigger, method_name="execute_complete",
                   timeout=timedelta(seconds=self.timeout))

    def execute_complete(self, context: Any, event: Any = None) -> Any:
        event = event or {}
        status = event.get("status")
        what = (f"{', '.join(self.external_task_ids)} of" if self.external_task_ids
                else "the run of")
        if status == "skipped":
            raise SkipTask(f"{what} {self.external_dag_id} was skipped ({event.get('states')})")
        if status == "failed":
            message = f"{what} {self.external_dag_id} failed ({event.get('states')})"
            if self.soft_fail:
                raise SkipTask(f"soft_fail: {message}")
            raise RuntimeError(message)
        return None
