"""The one door for state changes of task instances and DAG runs.

Every write of a ``state`` column goes through this module. Each change:

1. is checked against the allowlist in ``statewright.core.transitions`` (``InvalidTransition``);
2. is applied as a compare-and-set: ``UPDATE … SET state=:to WHERE id IN (…) AND state=:from``
   (and ``AND try_number=:n`` when the caller fences on a try);
3. sets the timestamps the seeds attach to the target state;
4. appends one ``state_transition`` row per changed row, in the same transaction;
5. hands the events to the registered listeners after the transaction commits.

A lost race (the row was no longer in the from-state) is reported in ``TransitionResult.lost``,
never overwritten; a request for the edge already taken is reported in ``already``.

The door is this package: ``events`` (the history rows and the listeners), ``create`` (new DAG
runs and task instances), ``change`` (the compare-and-set of a state) and ``labels`` (a state's
name and note). Callers import the names below from ``statewright.db.transition``.
"""

from statewright.db.transition.change import set_dag_run_state, set_task_instance_state
from statewright.db.transition.create import (
    NewDagRun,
    add_map_indexes,
    create_dag_run,
    create_dag_runs,
    create_running_task_instance,
    create_task_instances,
    expand_mapped_task,
)
from statewright.db.transition.events import (
    ENTITY_RUN,
    ENTITY_TI,
    Listener,
    PerRow,
    TransitionEvent,
    TransitionResult,
    add_transition_listener,
    relay,
)
from statewright.db.transition.labels import (
    note_dag_runs,
    note_task_instances,
    rename_dag_runs,
    rename_task_instances,
)

__all__ = [
    "ENTITY_RUN", "ENTITY_TI", "Listener", "NewDagRun", "PerRow", "TransitionEvent",
    "TransitionResult",
    "add_map_indexes", "add_transition_listener", "create_dag_run", "create_dag_runs",
    "create_running_task_instance", "create_task_instances", "expand_mapped_task",
    "note_dag_runs", "note_task_instances", "relay", "rename_dag_runs", "rename_task_instances",
    "set_dag_run_state", "set_task_instance_state",
]
