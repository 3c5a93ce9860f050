"""Cross-DAG operators: ``TriggerDagRunOperator`` and ``ExternalTaskMarker`` (Airflow's names
and arguments).

A task process holds no database session, so ``TriggerDagRunOperator`` asks for the run in its
try's report: the supervising worker creates it in the transaction that applies the try's
outcome (a missing DAG or an existing run id fails the try there, with the reason). With
``wait_for_completion`` the task then defers on the triggered run's state through the
triggerer (the worker slot is free while it waits) and ends when the run reaches one of
``allowed_states`` (success) or ``failed_states`` (the try fails).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

from statewright.core.errors import DagDefinitionError
from statewright.sdk.baseoperator import BaseOperator
from statewright.sdk.exceptions import FailTask

__all__ = ["TRIGGER_REQUESTS", "ExternalTaskMarker", "TriggerDagRunOperator"]

#: The context key under which a try collects the runs it asks its worker to create.
TRIGGER_REQUESTS = "_dag_run_requests"
_RUN_STATES = frozenset({"queued", "running", "success", "failed", "paused", "cancelled"})


def _states(value: Sequence[str] | None, default: list[str], what: str, task_id: str) -> list[str]:
    states = list(default if value is None else value)
    bad = [s for s in states if str(s) not in _RUN_STATES]
    if bad:
        raise DagDefinitionError(f"task {task_id!r}: {what} holds {bad}, which are not DAG run "
                                 f"states ({', '.join(sorted(_RUN_STATES))}).")
    return [str(s) for s in states]


class TriggerDagRunOperator(BaseOperator):
    """Create a run of ``trigger_dag_id`` (with ``conf`` and ``logical_date``); optionally wait
    for it to finish. ``reset_dag_run``: when a run with ``trigger_run_id`` exists (this task
    was cleared and runs again), that run is cleared and runs again instead of failing."""

    template_fields: ClassVar[Sequence[str]] = ("trigger_dag_id", "trigger_run_id", "conf",
                                                "logical_date")

    def __init__(self, *, trigger_dag_id: str, trigger_run_id: str | None = None,
                 conf: Mapping[str, Any] | None = None,
                 logical_date: datetime | str | None = None, reset_dag_run: bool = False,
                 wait_for_completion: bool = False, poke_interval: float = 60,
                 allowed_states: Sequence[str] | None = None,
                 failed_states: Sequence[str] | None = None,
                 skip_when_already_exists: bool = False, deferrable: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(trigger_dag_id, str) or not trigger_dag_id:
            raise DagDefinitionError(f"task {self.task_id!r}: trigger_dag_id must be a DAG id.")
        if conf is not None and not isinstance(conf, Mapping):
            raise DagDefinitionError(f"task {self.task_id!r}: conf must be a dict.")
        self.trigger_dag_id = trigger_dag_id
        self.trigger_run_id = trigger_run_id
        self.conf = dict(conf or {})
        self.logical_date = logical_date
        self.reset_dag_run = bool(reset_dag_run)
        self.wait_for_completion = bool(wait_for_completion)
        self.poke_interval = float(poke_interval)
        self.allowed_states = _states(allowed_states, ["success"], "allowed_states",
                                      self.task_id)
        self.failed_states = _states(failed_states, ["failed"], "failed_states", self.task_id)
        self.skip_when_already_exists = bool(skip_when_already_exists)
        self.deferrable = True  # waiting always goes through the triggerer

    def _finish_init(self) -> None:
        dag = self._dag_requested
        if dag is not None and dag.dag_id == self.trigger_dag_id:
            raise DagDefinitionError(_loop_message(self.task_id, self.trigger_dag_id))
        super()._finish_init()

    def serialized_fields(self) -> dict[str, Any]:
        return {"trigger_dag_id": self.trigger_dag_id}

    def execute(self, context: Any) -> Any:
        dag_id = str(self.trigger_dag_id)
        if dag_id == context["dag"].dag_id:
            raise FailTask(_loop_message(self.task_id, dag_id))
        now = datetime.now(UTC)
        logical = _logical_date(self.logical_date, now, self.task_id)
        # As in Airflow 3: by default the run id follows the logical date, so that a controller
        # run again meets the run it triggered before (reset_dag_run clears it).
        run_id = str(self.trigger_run_id or f"manual__{logical.isoformat()}")
        requests = context.get(TRIGGER_REQUESTS)
        if requests is None:
            requests = context[TRIGGER_REQUESTS] = []
        requests.append({
            "dag_id": dag_id, "run_id": run_id, "conf": dict(self.conf or {}),
            "logical_date": logical.isoformat(), "reset_dag_run": self.reset_dag_run,
            "skip_when_already_exists": self.skip_when_already_exists})
        context["ti"].xcom_push("trigger_run_id", run_id)
        if self.wait_for_completion:
            from statewright.sdk.sensors.external_task import ExternalTaskTrigger

            self.defer(trigger=ExternalTaskTrigger(
                external_dag_id=dag_id, logical_dates=[logical], allowed_states=self.allowed_states,
                failed_states=self.failed_states, poke_interval=self.poke_interval),
                method_name="execute_complete", kwargs={"run_id": run_id})
        return run_id

    def execute_complete(self, context: Any, event: Any = None, run_id: str = "") -> str:
        status = (event or {}).get("status")
        if status != "success":
            raise FailTask(f"{self.trigger_dag_id} failed with failed state(s) "
                           f"{(event or {}).get('states')} (run {run_id})")
        return run_id


def _loop_message(task_id: str, dag_id: str) -> str:
    return (f"task {task_id!r}: TriggerDagRunOperator would trigger its own DAG {dag_id!r}, a "
            "loop that never ends; trigger another DAG (or give this DAG a schedule).")


def _logical_date(value: Any, now: datetime, task_id: str) -> datetime:
    if value is None:
        return now
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise FailTask(f"task {task_id!r}: logical_date {value!r} is not an ISO datetime"
                           ) from None
    if not isinstance(value, datetime):
        raise FailTask(f"task {task_id!r}: logical_date must be a datetime, got "
                       f"{type(value).__name__}")
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


class ExternalTaskMarker(BaseOperator):
    """Marks that ``external_task_id`` of ``external_dag_id`` depends on this task: clearing
    this task (with its downstream) clears that task in the run of the same logical date, and
    what follows it, recursively up to ``recursion_depth`` DAGs away."""

    def __init__(self, *, external_dag_id: str, external_task_id: str,
                 logical_date: str | datetime | None = None, recursion_depth: int = 10,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not external_dag_id or not external_task_id:
            raise DagDefinitionError(f"task {self.task_id!r}: external_dag_id and "
                                     "external_task_id are required.")
        if isinstance(recursion_depth, bool) or not isinstance(recursion_depth, int) or (
                recursion_depth <= 0):
            raise DagDefinitionError(f"task {self.task_id!r}: recursion_depth should be a "
                                     "positive integer")
        self.external_dag_id = external_dag_id
        self.external_task_id = external_task_id
        self.logical_date = logical_date
        self.recursion_depth = recursion_depth

    def serialized_fields(self) -> dict[str, Any]:
        return {"external_dag_id": self.external_dag_id,
                "external_task_id": self.external_task_id,
                "recursion_depth": self.recursion_depth}

    def execute(self, context: Any) -> None:
        return None

