"""``depends_on_past`` (Airflow's ``PrevDagrunDep``): which task instances must wait for the
same task in the previous run.

A task with ``depends_on_past=True`` is scheduled in a run only when its task instance in the
previous run (by logical date; without manual runs when the DAG has catchup) is ``success`` or
``skipped``, and, with ``wait_for_downstream``, the tasks directly downstream of it in that run
are too. The first run passes; so does a task that never ran before (a task added to the DAG:
Airflow's default ``ignore_first_depends_on_past``). A waiting task instance may still be
skipped or set ``upstream_failed`` by its trigger rule, and never makes the run deadlock: it
waits for the previous run.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import Connection

from statewright.core.states import TI, TaskInstanceState
from statewright.db.repositories import scheduling as sched_repo
from statewright.services.dag_view import DagView

_DONE = frozenset({TI.SUCCESS.value, TI.SKIPPED.value})


def blocked_by_past(conn: Connection, run_pk: int, view: DagView,
                    states: Mapping[str, TaskInstanceState]) -> frozenset[str]:
    """Task ids of the run, in ``none``, that ``depends_on_past`` keeps from being scheduled."""
    tasks = [tid for tid, state in states.items()
             if state is TI.NONE and tid in view.tasks and view.tasks[tid].depends_on_past]
    if not tasks:
        return frozenset()
    logical_date = sched_repo.run_logical_date(conn, run_pk)
    if logical_date is None:
        return frozenset()
    previous = sched_repo.previous_run(conn, view.dag_id, logical_date,
                                       exclude_manual=bool(view.raw.get("catchup", False)))
    if previous is None:
        return frozenset()  # the first run
    waits_down = {t for t in tasks if view.tasks[t].raw.get("wait_for_downstream")}
    needed = set(tasks) | {d for t in waits_down for d in view.tasks[t].downstream}
    before = sched_repo.states_in_run(conn, previous.id, needed)
    never_here = [t for t in tasks if t not in before]
    ran_earlier = (sched_repo.tasks_run_before(conn, view.dag_id, never_here, logical_date)
                   if never_here else set())
    blocked: set[str] = set()
    for t in tasks:
        state = before.get(t)
        if state is None:
            if t in ran_earlier:
                blocked.add(t)  # it ran before, but not in the previous run
        elif state not in _DONE:
            blocked.add(t)
        elif t in waits_down and any(before.get(d) not in _DONE
                                     for d in view.tasks[t].downstream):
            blocked.add(t)
    return frozenset(blocked)
