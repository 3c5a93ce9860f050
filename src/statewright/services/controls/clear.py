"""Clearing task instances: run them again, through their dependencies (Airflow's clear).

Mirrors ``clear_task_instances`` (``airflow/models/taskinstance.py``):

- a finished task instance goes ``restarting`` (the seed's "user clears") and at once ``none``,
  so the scheduler evaluates its trigger rule again; a *running* one goes ``restarting`` and its
  try is killed by the executor, which moves it to ``none`` when the try has stopped (the
  scheduler does so if no executor is left to: a restarting task instance never stays stuck);
  other unfinished ones (scheduled, queued, up_for_retry, up_for_reschedule, deferred) go
  ``none`` directly; a deferred one drops its trigger;
- ``max_tries`` becomes ``try_number + retries``: the task gets its retries back, and the try
  number keeps counting (every try stays in ``task_instance_history``);
- the results (xcom) of the cleared tasks and their reschedule records are deleted;
- a finished run (success, failed, cancelled) goes back to ``queued`` with ``clear_number + 1``.

The selection: ``-t`` regular expressions searched in task ids (all tasks when none), widened by
``--upstream`` / ``--downstream`` to every task above / below, then narrowed by
``--only-failed`` to failed and upstream_failed task instances.

Setup and teardown tasks widen a ``-t`` selection as Airflow's ``DAG.partial_subset`` (which its
``tasks clear`` uses) does, so a resource a cleared task needs is prepared and released again:

- a matched work task brings its *relevant* upstream setups (those with a teardown downstream of
  it, or with no teardown at all) and their teardowns;
- with ``--downstream``, so does every work task below a matched task;
- with ``--upstream``, every upstream setup brings its teardowns;
- a matched setup brings its teardowns (and, with ``--downstream``, everything below it).

``--only-failed`` narrows after this widening, as in Airflow (a setup that succeeded is then not
cleared).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine

from statewright.core.mapping import ti_label
from statewright.core.states import RUN, TI, TI_FAILED_STATES, DagRunState
from statewright.core.transitions import Actor, Who
from statewright.db.repositories import controls as controls_repo
from statewright.db.repositories import task_state as task_state_repo
from statewright.db.repositories import xcoms as xcom_repo
from statewright.services.controls.across import lenient_elsewhere, runs_for
from statewright.services.controls.common import (
    RESET_WAITS,
    RUN_FINISHED,
    ControlError,
    Plan,
    RunChange,
    RunContext,
    TaskChange,
    relatives,
    reset_values,
    run_controls,
)
from statewright.services.xcom_purge import purge_values

_MESSAGE = "cleared by a user"
_FINISHED_TASK = frozenset({TI.SUCCESS, TI.FAILED, TI.SKIPPED, TI.UPSTREAM_FAILED})
_WAITING = frozenset({TI.SCHEDULED, TI.QUEUED, TI.UP_FOR_RETRY, TI.UP_FOR_RESCHEDULE,
                      TI.SHUTDOWN, TI.DEFERRED, TI.AWAITING_INPUT})
_LEFT_ALONE = {
    TI.NONE: "waits for its dependencies already",
    TI.RESTARTING: "being cleared already: its try is being stopped",
    TI.REMOVED: "removed from the DAG",
}


@dataclass(frozen=True)
class ClearOptions:
    task_regexes: tuple[str, ...] = ()
    upstream: bool = False
    downstream: bool = False
    only_failed: bool = False
    map_indexes: tuple[int, ...] | None = None
    """Only these map indexes of the selected tasks (``--map-index``); all when ``None``."""


def select_tasks(ctx: RunContext, options: ClearOptions) -> list[str]:
    """The task ids to clear, in the run's order; ``ControlError`` when a regex matches none."""
    all_ids = [t.task_id for t in ctx.tis]
    chosen: set[str]
    if options.task_regexes:
        chosen = set()
        for pattern in options.task_regexes:
            try:
                regex = re.compile(pattern)
            except re.error as exc:
                raise ControlError(f"-t {pattern!r} is not a valid regular expression: {exc}.") \
                    from None
            matched = {t for t in all_ids if regex.search(t)}
            if not matched:
                raise ControlError(
                    f"No task of DAG {ctx.run.dag_id} (run {ctx.run.run_id}) matches "
                    f"-t {pattern!r}; its tasks are: {', '.join(sorted(all_ids)) or '(none)'}. "
                    "Nothing was changed.")
            chosen |= matched
    else:
        chosen = set(all_ids)
    seeds = sorted(chosen)
    if options.upstream:
        chosen |= relatives(ctx.view, seeds, upstream=True)
    if options.downstream:
        chosen |= relatives(ctx.view, seeds, upstream=False)
    if options.task_regexes and ctx.view is not None and ctx.view.setups:
        known = [t for t in seeds if t in ctx.view.tasks]
        chosen |= ctx.view.graph.clear_selection(
            known, include_upstream=options.upstream, include_downstream=options.downstream)
    chosen &= set(all_ids)
    if options.only_failed:
        chosen = {t.task_id for t in ctx.tis
                  if t.task_id in chosen and TI(t.state) in TI_FAILED_STATES}
    return list(dict.fromkeys(t for t in all_ids if t in chosen))


def _selected_rows(ctx: RunContext, options: ClearOptions) -> list[Any]:
    """The task instances to clear: every map index of the selected tasks, or the ones asked."""
    tasks = set(select_tasks(ctx, options))
    rows = [r for r in ctx.tis if r.task_id in tasks]
    if options.only_failed:
        rows = [r for r in rows if TI(r.state) in TI_FAILED_STATES]
    if options.map_indexes is not None:
        wanted = set(options.map_indexes)
        rows = [r for r in rows if r.map_index in wanted]
        if not rows:
            raise ControlError(
                f"No selected task instance of run {ctx.run.run_id} has map index "
                f"{', '.join(map(str, sorted(wanted)))}; nothing was changed.")
    return rows


def plan_clear(ctx: RunContext, options: ClearOptions) -> Plan:
    run = ctx.run
    plan = Plan("clear", run.id, run.dag_id, run.run_id, DagRunState(run.state))
    for row in _selected_rows(ctx, options):
        task_id = row.task_id
        state = TI(row.state)
        retries = ctx.retries(task_id)
        retries_back = retries if retries is not None else max(row.max_tries - row.try_number, 0)
        common = dict(ti_id=row.id, task_id=task_id, frm=state, try_number=row.try_number,
                      message=_MESSAGE, raise_max_tries_to_retries=retries_back,
                      map_index=row.map_index)
        if state in _LEFT_ALONE:
            plan.unchanged.append((ti_label(task_id, row.map_index), _LEFT_ALONE[state]))
        elif state is TI.RUNNING:
            plan.changes.append(TaskChange(path=(TI.RESTARTING,), kills_try=True, **common))
        elif state in _FINISHED_TASK:
            plan.changes.append(TaskChange(path=(TI.RESTARTING, TI.NONE),
                                           values=reset_values(RESET_WAITS), **common))
        elif state in _WAITING:
            plan.changes.append(TaskChange(
                path=(TI.NONE,), values=reset_values(RESET_WAITS),
                trigger_id=row.trigger_id if state is TI.DEFERRED else None, **common))
    if not plan.changes:
        plan.notice = ("nothing to clear: no selected task instance can be cleared"
                       if plan.unchanged else "nothing to clear: no task instance selected")
        return plan
    plan.deletes_results_of = [c.label for c in plan.changes]
    if DagRunState(run.state) in RUN_FINISHED:
        plan.run_change = RunChange(
            DagRunState(run.state), RUN.QUEUED, "tasks cleared by a user: the run starts again",
            values=(("clear_number", (run.clear_number or 0) + 1),))
    return plan


def clear_task_instances(
    engine: Engine,
    run_id: str,
    *,
    dag_id: str | None = None,
    task_regexes: Sequence[str] = (),
    upstream: bool = False,
    downstream: bool = False,
    only_failed: bool = False,
    map_indexes: Sequence[int] | None = None,
    dry_run: bool = False,
    actor: Who = Actor.USER,
    now: datetime,
    recursive: bool = True,
    clear_state: bool = False,
) -> Plan:
    """Clear task instances of one run (see the module docstring); returns what was done.
    ``map_indexes`` narrows the selected tasks to those map indexes; ``recursive`` follows the
    cleared tasks' ExternalTaskMarkers into other DAGs; ``clear_state`` also deletes their task
    state (kept otherwise, whatever its retention)."""
    plans = clear_across_runs(
        engine, run_id, dag_id=dag_id, task_regexes=task_regexes, upstream=upstream,
        downstream=downstream, only_failed=only_failed, map_indexes=map_indexes,
        dry_run=dry_run, actor=actor, now=now, recursive=recursive,
        clear_state=clear_state)
    return plans[0]


def clear_across_runs(
    engine: Engine,
    run_id: str,
    *,
    past: bool = False,
    future: bool = False,
    dag_id: str | None = None,
    task_regexes: Sequence[str] = (),
    upstream: bool = False,
    downstream: bool = False,
    only_failed: bool = False,
    map_indexes: Sequence[int] | None = None,
    dry_run: bool = False,
    actor: Who = Actor.USER,
    now: datetime,
    recursive: bool = True,
    clear_state: bool = False,
) -> list[Plan]:
    """``clear_task_instances`` in ``run_id`` and, with ``past`` / ``future``, in the DAG's
    earlier / later runs (in one transaction); the chosen run's plan comes first."""
    options = ClearOptions(tuple(task_regexes), upstream, downstream, only_failed,
                           None if map_indexes is None else tuple(map_indexes))
    dag_id, run_ids = runs_for(engine, run_id, dag_id, past=past, future=future)
    planner = lenient_elsewhere(lambda ctx: plan_clear(ctx, options), run_id, "clear")
    plans = run_controls(engine, planner, run_ids=run_ids, dag_id=dag_id, actor=actor, now=now,
                         dry_run=dry_run,
                         after=lambda conn, plan, ctx: after_clear(
                             conn, plan, ctx, actor=actor, now=now, follow_markers=recursive,
                             clear_state=clear_state))
    return sorted(plans, key=lambda p: p.run_id != run_id)


def after_clear(conn: Connection, plan: Plan, ctx: RunContext, *, actor: Actor = Actor.USER,
                now: datetime | None = None, follow_markers: bool = True,
                clear_state: bool = False) -> None:
    """Delete the cleared tasks' results and reschedules (and their task state when asked);
    follow their ExternalTaskMarkers."""
    cleared = [(plan.run_pk, c.task_id, c.map_index) for c in plan.changes]
    purge_values(conn, cleared)  # what the XCom backend keeps outside the database
    xcom_repo.clear_tasks(conn, cleared)
    if clear_state:
        task_state_repo.clear(conn, plan.dag_id, plan.run_id,
                              map_indexes=[(c.task_id, c.map_index) for c in plan.changes])
    controls_repo.delete_task_reschedules(conn, [c.ti_id for c in plan.changes])
    if follow_markers and now is not None:
        from statewright.services.controls.cross_dag import clear_external_markers

        clear_external_markers(conn, plan, ctx, actor=actor, now=now)
