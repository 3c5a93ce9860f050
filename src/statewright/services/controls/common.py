"""What every control shares: finding the run, a plan of changes, and applying it through the door.

A control (clear, mark, cancel, pause) is planned by a pure function over the run's rows and
applied in one transaction. Each change is a compare-and-set through ``db.transition``, fenced on
the try number; when a row moved under the plan (a try started, a task finished), the transaction
is rolled back and the plan is made again from the new rows. ``--dry-run`` prints the plan and
applies nothing, so what it shows is exactly what the same call would do.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine

from statewright.core.errors import StatewrightError
from statewright.core.mapping import ti_label
from statewright.core.states import RUN, TI, DagRunState, StateName, TaskInstanceState
from statewright.core.transitions import Who
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import controls as controls_repo
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.tables import task_instance
from statewright.services.dag_view import DagView

# Columns reset when a task instance leaves a deferral or a sensing period behind.
RESET_DEFERRAL: dict[str, Any] = {
    "next_method": None, "next_kwargs": None, "trigger_id": None, "trigger_timeout": None,
}
RESET_WAITS: dict[str, Any] = {
    **RESET_DEFERRAL, "next_retry_at": None, "reschedule_date": None, "first_poke_at": None,
    "poke_count": 0,
}
_ATTEMPTS = 5


class ControlError(StatewrightError):
    """A control that cannot be done as asked (unknown run or task, a finished run, …)."""


@dataclass(frozen=True)
class TaskChange:
    """One task instance moved through ``path`` (one or more edges) from ``frm``."""

    ti_id: int
    task_id: str
    frm: TaskInstanceState
    path: tuple[TaskInstanceState, ...]
    try_number: int
    message: str
    name: StateName | None = None
    values: tuple[tuple[str, Any], ...] = ()
    raise_max_tries_to_retries: int | None = None
    """Set ``max_tries = try_number + this`` (Airflow's clear gives the retries back)."""
    kills_try: bool = False
    """A try is running: the executor kills it once it sees the state change."""
    trigger_id: int | None = None
    map_index: int = -1

    @property
    def to(self) -> TaskInstanceState:
        return self.path[-1]

    @property
    def label(self) -> str:
        """``task`` or ``task[3]`` (map index 3)."""
        return ti_label(self.task_id, self.map_index)


@dataclass(frozen=True)
class RunChange:
    frm: DagRunState
    to: DagRunState
    message: str
    values: tuple[tuple[str, Any], ...] = ()


@dataclass
class Plan:
    """What a control will do to one run; ``describe()`` is what ``--dry-run`` prints."""

    action: str
    run_pk: int
    dag_id: str
    run_id: str
    run_state: DagRunState
    changes: list[TaskChange] = field(default_factory=list)
    run_change: RunChange | None = None
    unchanged: list[tuple[str, str]] = field(default_factory=list)
    """(task_id, why it is left alone)."""
    deletes_results_of: list[str] = field(default_factory=list)
    notice: str | None = None
    """Set when there is nothing to do, saying why (an idempotent repeat)."""

    @property
    def empty(self) -> bool:
        return not self.changes and self.run_change is None

    @property
    def kills(self) -> list[TaskChange]:
        return [c for c in self.changes if c.kills_try]

    def describe(self) -> list[str]:
        lines = [f"{self.action}: DAG {self.dag_id}, run {self.run_id} ({self.run_state.value})"]
        if self.notice:
            lines.append(f"  {self.notice}")
        for c in self.changes:
            path = " -> ".join(s.value for s in (c.frm, *c.path))
            name = f" named {c.name.value}" if c.name else ""
            kill = f"; try {c.try_number} is killed" if c.kills_try else ""
            trig = f"; trigger {c.trigger_id} removed" if c.trigger_id is not None else ""
            lines.append(f"  task {c.label}: {path}{name}{kill}{trig}")
        if self.run_change:
            lines.append(f"  run: {self.run_change.frm.value} -> {self.run_change.to.value}")
        if self.deletes_results_of:
            lines.append(f"  results (xcom) deleted: {', '.join(self.deletes_results_of)}")
        for task_id, why in self.unchanged:
            lines.append(f"  task {task_id}: unchanged ({why})")
        return lines


@dataclass
class RunContext:
    """What a planner reads: the run, its DAG as the scheduler sees it, its task instances."""

    run: Any
    view: DagView | None
    tis: list[Any]

    @property
    def by_task(self) -> dict[str, Any]:
        return {t.task_id: t for t in self.tis}

    def retries(self, task_id: str) -> int | None:
        task = self.view.tasks.get(task_id) if self.view else None
        return task.retries if task else None


# -- finding the run ------------------------------------------------------------------------


def find_run(conn: Connection, run_id: str, dag_id: str | None = None) -> Any:
    """The run ``run_id`` (of ``dag_id`` when given); a clear error when none or several."""
    runs = run_repo.find_by_run_id(conn, run_id)
    if dag_id:
        runs = [r for r in runs if r.dag_id == dag_id]
    if not runs:
        where = f" of DAG {dag_id!r}" if dag_id else ""
        raise ControlError(f"No DAG run with run id {run_id!r}{where}. `statewright dags runs` "
                           "lists recent runs.")
    if len(runs) > 1:
        raise ControlError(f"Run id {run_id!r} exists in several DAGs "
                           f"({', '.join(sorted(r.dag_id for r in runs))}); pass --dag-id.")
    return runs[0]


def load_context(conn: Connection, run_id: str, dag_id: str | None) -> RunContext:
    run = find_run(conn, run_id, dag_id)
    row = dag_repo.get_dag(conn, run.dag_id)
    view = DagView(row.serialized, row.dag_hash) if row is not None else None
    return RunContext(run=run, view=view, tis=ti_repo.by_run(conn, run.id))


def task_ids_or_error(ctx: RunContext, task_ids: Sequence[str]) -> None:
    known = set(ctx.by_task)
    missing = [t for t in task_ids if t not in known]
    if missing:
        raise ControlError(
            f"Run {ctx.run.run_id} of DAG {ctx.run.dag_id} has no task "
            f"{', '.join(repr(t) for t in missing)}; its tasks are: "
            f"{', '.join(sorted(known)) or '(none)'}.")


def relatives(view: DagView | None, task_ids: Sequence[str], *, upstream: bool) -> set[str]:
    """Every task reachable from ``task_ids`` going up (or down) the graph, themselves excluded."""
    if view is None:
        return set()
    seen: set[str] = set()
    stack = list(task_ids)
    while stack:
        task = view.tasks.get(stack.pop())
        if task is None:
            continue
        for other in task.upstream if upstream else task.downstream:
            if other not in seen:
                seen.add(other)
                stack.append(other)
    return seen - set(task_ids)


# -- applying -------------------------------------------------------------------------------


class _Moved(Exception):
    """A row left the state the plan was made from: roll back and plan again."""


P = TypeVar("P", bound=Plan)


def run_control(
    engine: Engine,
    planner: Callable[[RunContext], P],
    *,
    run_id: str,
    dag_id: str | None,
    actor: Who,
    now: datetime,
    dry_run: bool = False,
    after: Callable[[Connection, P, RunContext], None] | None = None,
) -> P:
    """Plan the control and, unless ``dry_run``, apply it in one transaction (re-planned when
    a row moved under it)."""
    return run_controls(engine, planner, run_ids=[run_id], dag_id=dag_id, actor=actor, now=now,
                        dry_run=dry_run, after=after)[0]


def run_controls(
    engine: Engine,
    planner: Callable[[RunContext], P],
    *,
    run_ids: Sequence[str],
    dag_id: str | None,
    actor: Who,
    now: datetime,
    dry_run: bool = False,
    after: Callable[[Connection, P, RunContext], None] | None = None,
) -> list[P]:
    """``run_control`` over several runs (``--past`` / ``--future``): one plan per run, all
    applied in one transaction, re-planned together when a row moved under any of them."""
    if dry_run:
        with engine.connect() as conn:
            return [planner(load_context(conn, r, dag_id)) for r in run_ids]
    for _ in range(_ATTEMPTS):
        try:
            plans: list[P] = []
            with transaction(engine) as conn:
                for run_id in run_ids:
                    ctx = load_context(conn, run_id, dag_id)
                    plan = planner(ctx)
                    if not plan.empty:
                        apply_plan(conn, plan, actor=actor, now=now)
                        if after is not None:
                            after(conn, plan, ctx)
                    plans.append(plan)
            return plans
        except _Moved:
            continue
    raise ControlError(f"Run {', '.join(run_ids)} kept changing while the control was applied "
                       f"({_ATTEMPTS} attempts); try again.")


def apply_plan(conn: Connection, plan: Plan, *, actor: Who, now: datetime) -> None:
    """Apply the run's change first (so the scheduler never sees a half-done control), then the
    task instances' changes grouped into as few statements as possible."""
    if plan.run_change is not None:
        rc = plan.run_change
        res = door.set_dag_run_state(conn, plan.run_pk, frm=rc.frm, to=rc.to, actor=actor,
                                     now=now, message=rc.message, values=dict(rc.values))
        if res.lost:
            raise _Moved()
    groups: dict[tuple[Any, ...], list[TaskChange]] = defaultdict(list)
    for c in plan.changes:
        key = (c.frm, c.path, c.name, c.message, c.values, c.raise_max_tries_to_retries)
        groups[key].append(c)
    for (frm, path, name, message, values, retries), changes in groups.items():
        pairs = [(c.ti_id, c.try_number) for c in changes]
        last = dict(values)
        if retries is not None:
            last["max_tries"] = task_instance.c.try_number + retries
        step_from = frm
        for i, to in enumerate(path):
            final = i == len(path) - 1
            res = door.set_task_instance_state(
                conn, [], fenced=pairs, frm=step_from, to=to, actor=actor, now=now,
                name=name if final else None, message=message, values=last if final else None)
            if res.lost:
                raise _Moved()
            step_from = to
    triggers = [c.trigger_id for c in plan.changes if c.trigger_id is not None]
    controls_repo.delete_unreferenced_triggers(conn, triggers)
    ti_repo.add_history(conn, [
        killed_try_history(c, _row(conn, c.ti_id), now) for c in plan.changes
        if c.kills_try and c.to in _TRY_ENDS
    ])


_TRY_ENDS = frozenset({TI.SUCCESS, TI.FAILED, TI.SKIPPED})


def _row(conn: Connection, ti_id: int) -> Any:
    return ti_repo.get(conn, ti_id)


def killed_try_history(c: TaskChange, row: Any, now: datetime) -> dict[str, Any]:
    """The ``task_instance_history`` row of a try a person ended while it ran."""
    return history_row(row, try_number=c.try_number, state=c.to,
                       name=c.name or StateName(row.state_name), message=c.message, now=now)


def history_row(row: Any, *, try_number: int, state: TaskInstanceState, name: StateName,
                message: str | None, now: datetime) -> dict[str, Any]:
    start = row.start_date
    return {
        "task_instance_id": row.id, "dag_id": row.dag_id, "run_id": row.run_id,
        "task_id": row.task_id, "try_number": try_number, "state": state.value,
        "state_name": name.value, "state_message": message, "hostname": row.hostname,
        "pid": row.pid, "start_date": start, "end_date": now,
        "duration": (now - start).total_seconds() if start else None,
        "error": None, "traceback": None, "log_path": None,
    }


def reset_values(*extra: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    merged: dict[str, Any] = {}
    for part in extra:
        merged.update(part)
    return tuple(sorted(merged.items()))


RUN_FINISHED = frozenset({RUN.SUCCESS, RUN.FAILED, RUN.CANCELLED})
