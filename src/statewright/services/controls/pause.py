"""Pausing and resuming a DAG run (DolphinScheduler's PAUSE).

While a run is ``paused`` no new task starts: the scheduler evaluates dependencies, retries and
reschedules only for ``running`` runs, and queues only scheduled task instances of running runs.
Pausing also hands the run's ``queued`` task instances back to ``scheduled`` (a try that an
executor has already started runs on); running tries finish and their outcomes are recorded;
a deferred task's trigger may still fire (it becomes ``scheduled`` and waits). Resuming puts the
run back to ``running`` (``queued`` when it never started) and the scheduler carries on from the
states the task instances reached. Pausing a *DAG* (``statewright dags pause``) is different: no
new run of it is created or started; runs already running go on.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine

from statewright.core.states import RUN, TI, DagRunState
from statewright.core.transitions import Actor, Who
from statewright.services.controls.common import (
    ControlError,
    Plan,
    RunChange,
    RunContext,
    TaskChange,
    run_control,
)
from statewright.services.flows.run_input import NO_INPUT, give_input


def plan_pause(ctx: RunContext) -> Plan:
    run = ctx.run
    state = DagRunState(run.state)
    plan = Plan("pause", run.id, run.dag_id, run.run_id, state)
    if state is RUN.PAUSED:
        plan.notice = "nothing changed: the run is paused already"
        return plan
    if state not in (RUN.QUEUED, RUN.RUNNING):
        raise ControlError(f"Run {run.run_id} of DAG {run.dag_id} is {state.value}: only a "
                           "queued or running run can be paused. Nothing was changed.")
    plan.run_change = RunChange(state, RUN.PAUSED, "paused by a user: no new task starts")
    for row in ctx.tis:
        if row.state == TI.QUEUED.value:
            plan.changes.append(TaskChange(
                ti_id=row.id, task_id=row.task_id, frm=TI.QUEUED, path=(TI.SCHEDULED,),
                try_number=row.try_number,
                message="the run was paused before this try started"))
    return plan


def plan_resume(ctx: RunContext) -> Plan:
    run = ctx.run
    state = DagRunState(run.state)
    plan = Plan("resume", run.id, run.dag_id, run.run_id, state)
    if state in (RUN.RUNNING, RUN.QUEUED):
        plan.notice = f"nothing changed: the run is not paused (it is {state.value})"
        return plan
    if state is not RUN.PAUSED:
        raise ControlError(f"Run {run.run_id} of DAG {run.dag_id} is {state.value}: only a "
                           "paused run can be resumed. Nothing was changed.")
    # A suspended flow run's process ended: queued, the scheduler starts it again.
    suspended = getattr(run, "state_name", None) == "Suspended"
    to = RUN.RUNNING if run.start_date is not None and not suspended else RUN.QUEUED
    plan.run_change = RunChange(state, to, "resumed by a user")
    return plan


def pause_run(engine: Engine, run_id: str, *, dag_id: str | None = None, dry_run: bool = False,
              actor: Who = Actor.USER, now: datetime) -> Plan:
    return run_control(engine, plan_pause, run_id=run_id, dag_id=dag_id, actor=actor, now=now,
                       dry_run=dry_run)


def resume_run(engine: Engine, run_id: str, *, dag_id: str | None = None, dry_run: bool = False,
               actor: Who = Actor.USER, now: datetime, run_input: Any = NO_INPUT) -> Plan:
    """``run_input``: the input a paused flow run waits for (checked, stored with the resume
    in one transaction)."""
    def give(conn: Connection, _plan: Plan, ctx: RunContext) -> None:
        give_input(conn, ctx.run, run_input)

    return run_control(engine, plan_resume, run_id=run_id, dag_id=dag_id, actor=actor, now=now,
                       dry_run=dry_run, after=give)
