"""A control over the same tasks in earlier and later runs (Airflow's ``include_past`` /
``include_future``).

The runs are the DAG's runs whose logical date (their run_after when they have none) is before /
after the chosen run's. The chosen run is planned as usual (an unknown task is an error there);
in every other run a task it does not have, or a map index it does not have, leaves that run
unchanged with a notice, as Airflow skips runs where the task does not exist.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Engine

from statewright.core.states import DagRunState
from statewright.db.repositories import runs as run_repo
from statewright.services.controls.common import ControlError, Plan, RunContext, find_run


def runs_for(engine: Engine, run_id: str, dag_id: str | None, *, past: bool,
             future: bool) -> tuple[str, list[str]]:
    """(the DAG id, the run ids to act on, oldest first)."""
    with engine.connect() as conn:
        run = find_run(conn, run_id, dag_id)
        if not (past or future):
            return run.dag_id, [run.run_id]
        return run.dag_id, run_repo.run_ids_around(conn, run.dag_id, run.run_id, past=past,
                                                   future=future)


def lenient_elsewhere(planner: Callable[[RunContext], Plan], origin: str,
                      action: str) -> Callable[[RunContext], Plan]:
    """``planner`` for the chosen run; elsewhere a ``ControlError`` (no such task there) gives
    an empty plan that says why."""
    def plan(ctx: RunContext) -> Plan:
        if ctx.run.run_id == origin:
            return planner(ctx)
        try:
            return planner(ctx)
        except ControlError as exc:
            run = ctx.run
            empty = Plan(action, run.id, run.dag_id, run.run_id, DagRunState(run.state))
            empty.notice = f"nothing to do in this run: {exc}"
            return empty
    return plan

