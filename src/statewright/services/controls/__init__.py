"""People's controls over runs: clear, mark, cancel, pause and resume.

Each control plans its changes from the run's rows and applies them through the one door
(``db.transition``) with the person's actor (``user`` from the CLI, ``api`` from the REST API).
"""

from statewright.services.controls.cancel import cancel_run
from statewright.services.controls.clear import clear_across_runs, clear_task_instances
from statewright.services.controls.common import ControlError, Plan
from statewright.services.controls.mark import mark_across_runs, mark_run, mark_task_instances
from statewright.services.controls.pause import pause_run, resume_run
from statewright.services.controls.stopped import settle_abandoned, settle_stopped_tries

__all__ = [
    "ControlError",
    "Plan",
    "cancel_run",
    "clear_across_runs",
    "clear_task_instances",
    "mark_across_runs",
    "mark_run",
    "mark_task_instances",
    "pause_run",
    "resume_run",
    "settle_abandoned",
    "settle_stopped_tries",
]
