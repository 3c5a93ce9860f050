"""Marking task instances and runs success or failed (Airflow's ``mark_tasks``).

Tasks (``set_state``): the task and, with ``--upstream`` / ``--downstream``, every task above /
below it move to the target state, whatever state they are in (removed ones and those already
there are left alone). A running try is killed by its executor, which sees that its task
instance no longer runs that try; the try's history row records the person's decision. When the
run had finished, its state is decided again from its leaves (Airflow's leaves rule); a running
run is left to the scheduler.

Runs:

- ``mark-success`` (``set_dag_run_state_to_success``): every task instance that has not
  succeeded — unfinished, failed or upstream_failed — becomes success (running tries killed);
  skipped and removed ones stay (skipped counts as success for the leaves rule). The run: success.
- ``mark-failed`` (``set_dag_run_state_to_failed``): running, deferred and up_for_reschedule task
  instances become failed (running tries killed), every other unfinished one skipped. The run:
  failed.

A run already in the target state is left as it is: the call answers "nothing changed".
DAG-level callbacks of the new run state are queued as for any run that ends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine

from statewright.core.mapping import ti_label
from statewright.core.run_state import TaskView, decide_run_state
from statewright.core.states import RUN, TI, TI_UNFINISHED, DagRunState, TaskInstanceState
from statewright.core.transitions import Actor, Who
from statewright.services.controls.across import lenient_elsewhere, runs_for
from statewright.services.controls.common import (
    RESET_DEFERRAL,
    ControlError,
    Plan,
    RunChange,
    RunContext,
    TaskChange,
    relatives,
    reset_values,
    run_control,
    run_controls,
    task_ids_or_error,
)
from statewright.services.worker.dag_callbacks import enqueue_run_callbacks

MARKABLE = (TI.SUCCESS, TI.FAILED)


def _task_change(row: Any, to: TaskInstanceState, message: str) -> TaskChange:
    state = TI(row.state)
    return TaskChange(
        ti_id=row.id, task_id=row.task_id, frm=state, path=(to,), try_number=row.try_number,
        message=message,
        values=reset_values(RESET_DEFERRAL) if state in _LEAVES_A_TRY else (),
        kills_try=state in (TI.RUNNING, TI.RESTARTING),
        trigger_id=row.trigger_id if state is TI.DEFERRED else None,
        map_index=row.map_index,
    )


_LEAVES_A_TRY = frozenset({TI.DEFERRED, TI.RUNNING, TI.UP_FOR_RESCHEDULE, TI.AWAITING_INPUT})


def plan_mark_tasks(ctx: RunContext, task_id: str, to: TaskInstanceState, *, upstream: bool,
                    downstream: bool, map_indexes: Sequence[int] | None = None) -> Plan:
    if to not in MARKABLE:
        raise ControlError(f"tasks can be marked success or failed, not {to.value}.")
    task_ids_or_error(ctx, [task_id])
    run = ctx.run
    plan = Plan(f"mark {to.value}", run.id, run.dag_id, run.run_id, DagRunState(run.state))
    chosen = {task_id}
    if upstream:
        chosen |= relatives(ctx.view, [task_id], upstream=True)
    if downstream:
        chosen |= relatives(ctx.view, [task_id], upstream=False)
    message = f"marked {to.value} by a user"
    new_states: dict[str, TaskInstanceState] = {}
    for row in ctx.tis:
        state = TI(row.state)
        label = ti_label(row.task_id, row.map_index)
        new_states[label] = state
        if row.task_id not in chosen or (
                map_indexes is not None and row.task_id == task_id
                and row.map_index not in map_indexes):
            continue
        if state is to:
            plan.unchanged.append((label, f"{to.value} already"))
        elif state is TI.REMOVED:
            plan.unchanged.append((label, "removed from the DAG"))
        else:
            plan.changes.append(_task_change(row, to, message))
            new_states[label] = to
    if not plan.changes:
        plan.notice = f"nothing changed: the selected task instances are {to.value} already"
        return plan
    run_state = DagRunState(run.state)
    if run_state in (RUN.SUCCESS, RUN.FAILED) and ctx.view is not None:
        task_of = {ti_label(r.task_id, r.map_index): r.task_id for r in ctx.tis}
        leaves = {t for t in new_states if task_of[t] in ctx.view.run_state_leaves
                  or task_of[t] not in ctx.view.tasks}
        decided = decide_run_state([TaskView(t, s) for t, s in new_states.items()], leaves)
        if decided is not None and decided is not run_state:
            plan.run_change = RunChange(run_state, decided,
                                        "task instances were marked by a user; the run follows "
                                        "its leaves")
    return plan


def plan_mark_run(ctx: RunContext, to: DagRunState) -> Plan:
    run = ctx.run
    state = DagRunState(run.state)
    plan = Plan(f"mark run {to.value}", run.id, run.dag_id, run.run_id, state)
    if state is to:
        plan.notice = f"nothing changed: the run is {to.value} already"
        return plan
    message = f"run marked {to.value} by a user"
    for row in ctx.tis:
        ti_state = TI(row.state)
        if to is RUN.SUCCESS:
            if ti_state in TI_UNFINISHED or ti_state in (TI.FAILED, TI.UPSTREAM_FAILED):
                plan.changes.append(_task_change(row, TI.SUCCESS, message))
        elif ti_state in (TI.RUNNING, TI.DEFERRED, TI.UP_FOR_RESCHEDULE, TI.AWAITING_INPUT):
            plan.changes.append(_task_change(row, TI.FAILED, message))
        elif ti_state in TI_UNFINISHED:
            plan.changes.append(_task_change(row, TI.SKIPPED, message))
    plan.run_change = RunChange(state, to, message)
    return plan


def mark_task_instances(
    engine: Engine,
    run_id: str,
    task_id: str,
    to: TaskInstanceState,
    *,
    dag_id: str | None = None,
    upstream: bool = False,
    downstream: bool = False,
    map_indexes: Sequence[int] | None = None,
    dry_run: bool = False,
    actor: Who = Actor.USER,
    now: datetime,
) -> Plan:
    return mark_across_runs(engine, run_id, task_id, to, dag_id=dag_id, upstream=upstream,
                            downstream=downstream, map_indexes=map_indexes, dry_run=dry_run,
                            actor=actor, now=now)[0]


def mark_across_runs(
    engine: Engine,
    run_id: str,
    task_id: str,
    to: TaskInstanceState,
    *,
    past: bool = False,
    future: bool = False,
    dag_id: str | None = None,
    upstream: bool = False,
    downstream: bool = False,
    map_indexes: Sequence[int] | None = None,
    dry_run: bool = False,
    actor: Who = Actor.USER,
    now: datetime,
) -> list[Plan]:
    """Mark the task in ``run_id`` and, with ``past`` / ``future``, in the DAG's earlier / later
    runs (one transaction); the chosen run's plan comes first."""
    dag_id, run_ids = runs_for(engine, run_id, dag_id, past=past, future=future)
    planner = lenient_elsewhere(
        lambda ctx: plan_mark_tasks(ctx, task_id, TI(to), upstream=upstream,
                                    downstream=downstream, map_indexes=map_indexes),
        run_id, f"mark {TI(to).value}")
    plans = run_controls(engine, planner, run_ids=run_ids, dag_id=dag_id, actor=actor, now=now,
                         dry_run=dry_run, after=_queue_callbacks(now))
    return sorted(plans, key=lambda p: p.run_id != run_id)


def mark_run(
    engine: Engine,
    run_id: str,
    to: DagRunState,
    *,
    dag_id: str | None = None,
    dry_run: bool = False,
    actor: Who = Actor.USER,
    now: datetime,
) -> Plan:
    if RUN(to) not in (RUN.SUCCESS, RUN.FAILED):
        raise ControlError(f"a run can be marked success or failed, not {to}.")
    return run_control(engine, lambda ctx: plan_mark_run(ctx, RUN(to)), run_id=run_id,
                       dag_id=dag_id, actor=actor, now=now, dry_run=dry_run,
                       after=_queue_callbacks(now))


def _queue_callbacks(now: datetime) -> Callable[[Connection, Plan, RunContext], None]:
    def after(conn: Connection, plan: Plan, ctx: RunContext) -> None:
        rc = plan.run_change
        if rc is not None and rc.to in (RUN.SUCCESS, RUN.FAILED) and ctx.view is not None:
            enqueue_run_callbacks(conn, [plan.run_pk], state=rc.to, serialized=ctx.view.raw,
                                  now=now, reason=rc.message)
    return after


__all__: Sequence[str] = ("mark_across_runs", "mark_run", "mark_task_instances", "plan_mark_run",
                          "plan_mark_tasks")
