"""The scheduling steps the composition root adds to a ``Scheduler`` (``extra_steps``).

- ``DagRunCreation``: scheduled runs from timetables (``dagrun_creation``);
- ``AssetRunCreation``: asset-triggered runs from queued asset events (``asset_runs``);
- ``BackfillProgress``: the runs of backfills, within each backfill's ``max_active_runs``
  (``statewright.services.backfill``);
- ``LateNaming``: the ``Late`` state name (``late``);
- ``HITLTimeouts``: the response timeouts of task instances awaiting input (``hitl_timeouts``).
- ``DeadlineCheck``: deadline alerts that passed (``deadlines``).
- ``LostFlowRuns`` / ``QueuedFlowRuns``: flow runs whose process was lost end ``Crashed``;
  queued flow runs nobody serves get their flow's process (``statewright.services.flows``).

Pools, priority, ``max_active_tasks``, ``max_active_tis_per_dag`` (``capacity``) and
``depends_on_past`` (``past``) are part of every scheduler loop.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from statewright.services.backfill import BackfillProgress
from statewright.services.flows.launcher import QueuedFlowRuns
from statewright.services.flows.reaper import LostFlowRuns
from statewright.services.scheduler.asset_runs import AssetRunCreation
from statewright.services.scheduler.dagrun_creation import DagRunCreation
from statewright.services.scheduler.deadlines import DeadlineCheck
from statewright.services.scheduler.hitl_timeouts import HITLTimeouts
from statewright.services.scheduler.late import LateNaming

if TYPE_CHECKING:
    from statewright.services.scheduler.scheduler import Scheduler

Step = Callable[["Scheduler", datetime], int]

__all__ = ["AssetRunCreation", "BackfillProgress", "DagRunCreation", "DeadlineCheck",
           "HITLTimeouts", "LateNaming", "scheduling_steps"]


def scheduling_steps(
    *,
    max_dagruns_per_loop: int = 1000,
    late_run_threshold: timedelta = timedelta(seconds=60),
    late_task_threshold: timedelta = timedelta(seconds=60),
) -> list[Step]:
    return [
        DagRunCreation(max_dags_per_loop=max_dagruns_per_loop),
        AssetRunCreation(max_dags_per_loop=max_dagruns_per_loop),
        BackfillProgress(),
        LateNaming(run_threshold=late_run_threshold, task_threshold=late_task_threshold),
        LostFlowRuns(),
        HITLTimeouts(),
        DeadlineCheck(),
        QueuedFlowRuns(),
    ]
