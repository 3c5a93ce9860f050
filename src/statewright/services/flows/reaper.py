"""Flow runs whose recorder stopped heartbeating (the host died with both processes): the
scheduler ends them, and their running task runs, ``Crashed``."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from statewright.core.states import RUN
from statewright.core.transitions import Actor
from statewright.db.engine import read_snapshot
from statewright.db.repositories import flows as flow_repo
from statewright.services.flows.recorder import crash_runs

log = logging.getLogger("statewright.flows.reaper")


class LostFlowRuns:
    """A scheduler step: ``Scheduler(extra_steps=[LostFlowRuns()])``."""

    def __init__(self, threshold: timedelta = timedelta(seconds=60)) -> None:
        self.threshold = threshold

    def __call__(self, scheduler: Any, now: datetime) -> int:
        return reap_lost_flow_runs(scheduler.engine, now, self.threshold)

    due_moves_with_now = True  # ``due_probe``: its query is built once

    def due(self, now: datetime) -> Any:
        """A flow run's recorder stopped heartbeating (read in the scheduler pass's probe)."""
        return flow_repo.lost_runs_query(now - self.threshold, (RUN.RUNNING.value,))


def reap_lost_flow_runs(engine: Any, now: datetime, threshold: timedelta) -> int:
    with read_snapshot(engine) as conn:
        lost = flow_repo.lost_runs(conn, now - threshold, (RUN.RUNNING.value,))
    if not lost:
        return 0
    # a durable run with retries left is queued to resume: the launcher starts its process
    outcome = crash_runs(engine, {r.id for r in lost},
                         f"no heartbeat from the flow run's recorder for more than "
                         f"{threshold.total_seconds():.0f}s: its process is lost",
                         actor=Actor.SCHEDULER)
    log.warning("%d flow run(s) lost with their process: %d Crashed, %d resuming",
                len(outcome), outcome.crashed, len(outcome.resumed))
    return len(outcome)
