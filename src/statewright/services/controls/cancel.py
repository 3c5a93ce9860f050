"""Cancelling a DAG run (Prefect's Cancelled, DolphinScheduler's STOP).

The run becomes ``cancelled`` (terminal; a clear starts it again). Its task instances:

- ``running``: ``shutdown`` named ``Cancelling``; the executor kills the try (SIGTERM, then
  SIGKILL after a grace period) and, once it has stopped, the task instance ends ``failed`` named
  ``Cancelled`` (see :mod:`statewright.services.controls.stopped`);
- every other unfinished one (none, scheduled, queued, up_for_retry, up_for_reschedule, deferred,
  restarting, shutdown): ``skipped`` named ``Cancelled`` at once. An up_for_retry task instance
  does not retry; a deferred one drops its trigger (the trigger row is deleted once no task
  instance refers to it), a rescheduled sensor does not poke again;
- finished ones keep their state.

Failure hooks do not fire: a killed try runs no hook; a try that reports its end after the
cancel asks its worker first and finds it is no longer running; the run ends ``cancelled``, not
``failed``, so no DAG-level failure callback is queued.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine

from statewright.core.states import RUN, TI, TI_UNFINISHED, DagRunState, StateName
from statewright.core.transitions import Actor, Who
from statewright.services.controls.common import (
    RESET_WAITS,
    ControlError,
    Plan,
    RunChange,
    RunContext,
    TaskChange,
    reset_values,
    run_control,
)

_MESSAGE = "cancelled by a user"


def plan_cancel(ctx: RunContext) -> Plan:
    run = ctx.run
    state = DagRunState(run.state)
    plan = Plan("cancel", run.id, run.dag_id, run.run_id, state)
    if state is RUN.CANCELLED:
        plan.notice = "nothing changed: the run is cancelled already"
        return plan
    if state in (RUN.SUCCESS, RUN.FAILED):
        raise ControlError(
            f"Run {run.run_id} of DAG {run.dag_id} has finished ({state.value}): only a queued, "
            "running or paused run can be cancelled. Nothing was changed. To run its tasks "
            f"again, clear them: `statewright tasks clear {run.run_id} --dag-id {run.dag_id}`.")
    plan.run_change = RunChange(state, RUN.CANCELLED, _MESSAGE)
    for row in ctx.tis:
        ti_state = TI(row.state)
        if ti_state not in TI_UNFINISHED:
            continue
        common = dict(ti_id=row.id, task_id=row.task_id, frm=ti_state,
                      try_number=row.try_number, map_index=row.map_index)
        if ti_state is TI.RUNNING:
            plan.changes.append(TaskChange(
                path=(TI.SHUTDOWN,), name=StateName.CANCELLING, kills_try=True,
                message=f"{_MESSAGE}: try {row.try_number} is being killed", **common))
        else:
            plan.changes.append(TaskChange(
                path=(TI.SKIPPED,), name=StateName.CANCELLED, values=reset_values(RESET_WAITS),
                kills_try=ti_state is TI.RESTARTING,
                trigger_id=row.trigger_id if ti_state is TI.DEFERRED else None,
                message=f"{_MESSAGE} before the task finished ({ti_state.value})", **common))
    return plan


def cancel_run(engine: Engine, run_id: str, *, dag_id: str | None = None,
               dry_run: bool = False, actor: Who = Actor.USER, now: datetime) -> Plan:
    return run_control(engine, plan_cancel, run_id=run_id, dag_id=dag_id, actor=actor, now=now,
                       dry_run=dry_run)
