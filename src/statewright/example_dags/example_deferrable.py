"""Waiting without holding a worker: a deferrable sensor and an operator that defers to a trigger.

Watch the task instances go Deferred (the triggerer holds the wait, no task process does), then
Scheduled and Resuming when their trigger fires; ``statewright triggers list`` shows the waits.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from statewright.sdk import DAG, BaseOperator, task
from statewright.sdk.sensors import TimeDeltaSensor
from statewright.sdk.triggers import TimeDeltaTrigger


class WaitForQuietPeriod(BaseOperator):
    """Defers for ``seconds``, then resumes in ``resume`` with the trigger's event."""

    def __init__(self, *, seconds: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seconds = seconds

    def execute(self, context: Any) -> None:
        self.defer(trigger=TimeDeltaTrigger(timedelta(seconds=self.seconds)),
                   method_name="resume")

    def resume(self, context: Any, event: Any = None) -> str:
        return f"quiet for {self.seconds}s (event: {event})"


with DAG("example_deferrable", start_date=datetime(2026, 1, 1), schedule=None,
         tags=["example"]):
    # Succeeds 3 s after the run's logical date; the wait is the triggerer's.
    wait = TimeDeltaSensor(task_id="wait_3s", delta=timedelta(seconds=3), deferrable=True)
    quiet = WaitForQuietPeriod(task_id="quiet_period", seconds=2)

    @task
    def report(message: str) -> str:
        print(message)
        return message

    wait >> quiet
    report(quiet.output)
