"""``statewright tasks why``: explain, from the database, why a task instance is where it is."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import click
from rich.console import Console
from sqlalchemy import Connection, select

from statewright.core.clock import utcnow
from statewright.core.durations import duration_words
from statewright.core.errors import StatewrightError
from statewright.core.states import TI
from statewright.core.trigger_rules import DepDecision, UpstreamSummary, evaluate_dependencies
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.db.tables import job, task_instance, trigger
from statewright.services.dag_view import DagView

console = Console()


def _age(now: datetime, then: datetime | None) -> str:
    if then is None:
        return "never"
    seconds = (now - then).total_seconds()
    return f"{seconds:.1f}s ago" if seconds >= 0 else f"in {-seconds:.1f}s"


def explain(conn: Connection, dag_id: str, run_id: str, task_id: str, *, now: datetime,
            zombie_threshold: float = 60.0, map_index: int = -1) -> list[str]:
    """Plain sentences answering "why is this task instance in this state, and what next?"."""
    run = run_repo.get_by_run_id(conn, dag_id, run_id)
    if run is None:
        raise StatewrightError(f"DAG {dag_id!r} has no run {run_id!r}.")
    ti = ti_repo.get_by_key(conn, run.id, task_id, map_index)
    if ti is None:
        mapped = ti_repo.mapped_instances(conn, run.id, task_id)
        if mapped:
            raise StatewrightError(
                f"Task {task_id!r} of run {run_id} is mapped into {len(mapped)} task instances "
                f"(map indexes {mapped[0].map_index} to {mapped[-1].map_index}); pick one with "
                "--map-index.")
        raise StatewrightError(f"Run {run_id} of {dag_id} has no task {task_id!r}.")
    dag_row = dag_repo.get_dag(conn, dag_id)
    view = DagView(dag_row.serialized, dag_row.dag_hash) if dag_row else None
    out = [f"{dag_id} / {run_id} / {task_id}: {ti.state} ({ti.state_name}), try {ti.try_number}"
           + (f", max tries {ti.max_tries + 1}" if ti.max_tries else "")]
    if ti.state_message:
        out.append(f"message: {ti.state_message}")
    out.append(f"the run is {run.state} ({run.state_name})")
    state = TI(ti.state)
    if run.state == "queued":
        out.append("tasks start only in running runs: the run waits for a slot under the DAG's "
                   f"max_active_runs ({dag_row.max_active_runs if dag_row else '?'})"
                   + (" and the DAG is paused" if dag_row is not None and dag_row.is_paused
                      else ""))
    elif run.state == "paused":
        out.append("the run is paused: no new task starts until it is resumed")
    if state is TI.NONE and view is not None and task_id in view.tasks:
        out += _why_none(conn, run.id, view, task_id)
    elif state is TI.SCHEDULED:
        active = ti_repo.count_active_by_dag(conn, [dag_id]).get(dag_id, 0)
        out.append(f"scheduled {_age(now, ti.scheduled_at)}: waiting for an executor slot; "
                   f"{active} task instances of this DAG are queued or running (max_active_tasks "
                   f"{dag_row.max_active_tasks if dag_row else '?'}); pool {ti.pool!r} needs "
                   f"{ti.pool_slots} slot(s)")
    elif state is TI.QUEUED:
        out.append(f"queued {_age(now, ti.queued_at)} by executor {ti.executor or '?'}; a worker "
                   "starts it when a task process is free. If the executor is gone, the "
                   "scheduler puts it back to scheduled (at its restart, or after the queued "
                   "timeout)")
    elif state is TI.RUNNING:
        beat = ti.last_heartbeat_at
        out.append(f"running on {ti.hostname} pid {ti.pid}, started {_age(now, ti.start_date)}, "
                   f"last heartbeat {_age(now, beat)}")
        if beat is not None and (now - beat).total_seconds() > zombie_threshold:
            out.append(f"no heartbeat for more than {duration_words(zombie_threshold)}: the "
                       "scheduler will "
                       "end this try as Crashed (zombie) and retry it if retries remain")
    elif state is TI.UP_FOR_RETRY:
        out.append(f"waiting to retry: next try {_age(now, ti.next_retry_at)}")
    elif state is TI.UP_FOR_RESCHEDULE:
        out.append(f"sensor waiting: next poke {_age(now, ti.reschedule_date)}")
    elif state is TI.DEFERRED:
        out += _why_deferred(conn, ti, now)
    elif state is TI.AWAITING_INPUT:
        out.append("awaiting a person's input (no process, no slot): see `statewright tasks "
                   "required-actions`; it resumes when someone responds (`statewright tasks "
                   "respond`) or its response timeout passes")
    elif state is TI.UPSTREAM_FAILED and view is not None and task_id in view.tasks:
        out += _why_upstream_failed(conn, run.id, run.run_id, view, task_id)
    elif state is TI.RESTARTING:
        out.append("cleared while running: the old try is being killed; it goes back to none "
                   "(and is scheduled again) as soon as the try has stopped")
    history = transitions_log.for_task_instance(conn, ti.id)
    if history:
        last = history[-1]
        out.append(f"last change: {last.from_state or '(created)'} -> {last.to_state} "
                   f"({last.name}) by {last.actor} {_age(now, last.at)}"
                   + (f": {last.message}" if last.message else ""))
    return out


def _why_none(conn: Connection, run_pk: int, view: DagView, task_id: str) -> list[str]:
    task = view.tasks[task_id]
    if not task.upstream:
        return ["no upstream tasks: the scheduler schedules it on its next loop"]
    indirect = sorted(view.indirect_setups.get(task_id, ()))
    rows = conn.execute(
        select(task_instance.c.task_id, task_instance.c.state).where(
            task_instance.c.dag_run_id == run_pk,
            task_instance.c.task_id.in_([*task.upstream, *indirect]))
    ).all()
    states = {r.task_id: TI(r.state) for r in rows}
    direct = [u for u in task.upstream if u in states]
    summary = UpstreamSummary.from_states([states[u] for u in direct],
                                          [states[u] for u in direct if u in view.setups])
    setup_states = [states[s] for s in indirect if s in states]
    decision = evaluate_dependencies(
        task.trigger_rule, summary,
        UpstreamSummary.from_states(setup_states) if setup_states else None)
    ups = ", ".join(f"{u}={states.get(u, '?')}" for u in task.upstream)
    verdict = {
        DepDecision.WAIT: "not met yet: it waits for its upstream tasks",
        DepDecision.RUN: "met: the scheduler schedules it on its next loop",
        DepDecision.SKIP: "can never be met: the scheduler skips it",
        DepDecision.UPSTREAM_FAILED: "can never be met: the scheduler sets it upstream_failed",
    }[decision]
    out = [f"trigger rule {task.trigger_rule.value} over upstream [{ups}]: {verdict}"]
    if indirect:
        setups = ", ".join(f"{s}={states.get(s, '?')}" for s in indirect)
        out.append(f"it is in the scope of setup task(s) [{setups}]: it waits until they "
                   "succeed, and is skipped / upstream_failed if one is skipped / fails")
    return out


_BROKEN = {TI.FAILED.value, TI.UPSTREAM_FAILED.value}


def _why_upstream_failed(conn: Connection, run_pk: int, run_id: str, view: DagView,
                         task_id: str) -> list[str]:
    """Name the upstream task(s) that failed, and the failed task(s) at the root of the
    chain when an upstream is itself upstream_failed."""
    states: dict[str, set[str]] = {}
    for t in ti_repo.by_run(conn, run_pk):
        states.setdefault(t.task_id, set()).add(t.state)
    task = view.tasks[task_id]
    broken = [u for u in task.upstream if states.get(u, set()) & _BROKEN]
    if not broken:
        return ["no upstream task is failed now (cleared since?): `statewright tasks clear "
                f"{run_id} -t '^{task_id}$'` runs it again"]
    shown = ", ".join(f"{u} ({'/'.join(sorted(states[u] & _BROKEN))})" for u in broken)
    out = [f"failed upstream: {shown}; under trigger rule {task.trigger_rule.value} it cannot "
           "run"]
    roots = _failed_roots(view, states, broken)
    if roots and roots != broken:
        out.append(f"the failure started at: {', '.join(roots)}")
    pattern = "|".join(roots or broken)
    out.append(f"after a fix, `statewright tasks clear {run_id} -t '^({pattern})$' -d` runs "
               "them and everything downstream again")
    return out


def _failed_roots(view: DagView, states: dict[str, set[str]], start: list[str]) -> list[str]:
    """The failed tasks reached by walking up from ``start`` through upstream_failed ones."""
    roots: list[str] = []
    seen: set[str] = set()
    todo = list(start)
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if TI.FAILED.value in states.get(name, set()) and name not in roots:
            roots.append(name)
        if TI.UPSTREAM_FAILED.value in states.get(name, set()) and name in view.tasks:
            todo += [u for u in view.tasks[name].upstream if states.get(u, set()) & _BROKEN]
    return roots


def _why_deferred(conn: Connection, ti: Any, now: datetime) -> list[str]:
    out = [f"deferred: waiting for trigger {ti.trigger_id}; resumes with method "
           f"{ti.next_method!r}; times out {_age(now, ti.trigger_timeout)}"]
    if ti.trigger_id is None:
        return [*out, "it has no trigger: the scheduler's clean-up will fail or reschedule it"]
    row = conn.execute(select(trigger).where(trigger.c.id == ti.trigger_id)).first()
    if row is None:
        return [*out, "its trigger row is gone: the event has fired or the trigger was cleaned"]
    out.append(f"trigger {row.classpath}, created {_age(now, row.created_date)}")
    if row.triggerer_id is None:
        out.append("no triggerer has claimed it: is `statewright triggerer` (or standalone) "
                   "running? `statewright triggers list` shows the claims")
    else:
        j = conn.execute(select(job).where(job.c.id == row.triggerer_id)).first()
        if j is not None:
            out.append(f"claimed by triggerer {j.id} on {j.hostname} pid {j.pid}, last heartbeat "
                       f"{_age(now, j.latest_heartbeat)}")
    return out


def register(cli: click.Group) -> None:
    tasks = cli.commands["tasks"]
    assert isinstance(tasks, click.Group)

    @tasks.command("why")
    @click.argument("run_id")
    @click.argument("task_id")
    @click.option("--dag-id", help="The DAG, when the run id is not unique.")
    @click.option("--map-index", type=click.IntRange(min=-1), default=-1,
                  help="The instance of a mapped task.")
    @click.pass_obj
    def tasks_why(app: Any, run_id: str, task_id: str, dag_id: str | None,
                  map_index: int) -> None:
        """Explain why TASK_ID of RUN_ID is in its state and what happens next."""
        from statewright.cli.main import _find_run
        from statewright.cli.output import fail as _fail

        try:
            run = _find_run(app, run_id, dag_id)
            with app.engine.connect() as conn:
                lines = explain(conn, run.dag_id, run.run_id, task_id, now=utcnow(),
                                zombie_threshold=app.settings.zombie_threshold_seconds,
                                map_index=map_index)
        except StatewrightError as exc:
            _fail(str(exc))
            return
        for line in lines:
            console.print(line, highlight=False, soft_wrap=True, markup=False)
