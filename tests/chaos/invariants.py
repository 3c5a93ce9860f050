"""The invariants a chaos round must leave true, checked from the database alone.

History is read in ``state_transition.id`` order: ids are taken inside the writing transaction,
so a change another transaction saw committed always has a smaller id than what it then wrote;
the order is therefore safe for reconstructing occupancy (a slot freed is never counted free
before the change that freed it).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, select

from statewright.core.states import RUN_TERMINAL, TI, TI_TERMINAL
from statewright.core.transitions import DAG_RUN_EDGES, TASK_INSTANCE_EDGES
from statewright.db.tables import dag_run, job, pool, state_transition, task_instance, trigger

_SLOT_STATES = {TI.QUEUED.value, TI.RUNNING.value}
_PAUSES = {TI.DEFERRED.value, TI.UP_FOR_RESCHEDULE.value}  # a try leaves running, comes back


@dataclass
class Report:
    runs: int = 0
    task_instances: int = 0
    transitions: int = 0
    crashed_tries: int = 0
    zombies: int = 0
    """Crashed tries the reaper found silent (the paused scheduler's among them)."""
    deferrals: int = 0
    reschedules: int = 0
    runs_by_state: Counter[str] = field(default_factory=Counter)
    max_pool: dict[str, int] = field(default_factory=dict)
    max_run_tasks: int = 0
    max_active_runs: int = 0
    violations: list[str] = field(default_factory=list)

    def violate(self, text: str) -> None:
        if len(self.violations) < 200:
            self.violations.append(text)

    def summary(self) -> str:
        return (f"runs {self.runs} {dict(self.runs_by_state)}, task instances "
                f"{self.task_instances}, transitions {self.transitions}, crashed tries "
                f"{self.crashed_tries} ({self.zombies} zombies), deferrals {self.deferrals}, "
                f"reschedules {self.reschedules}, peak pool use {self.max_pool}, "
                f"peak tasks in a run {self.max_run_tasks}, peak active runs "
                f"{self.max_active_runs}, violations {len(self.violations)}")


def check(conn: Connection, *, dag_id: str, pool_slots: dict[str, int], max_active_runs: int,
          max_active_tasks: int, triggerer_dead_after: timedelta, now: Any) -> Report:
    r = Report()
    runs = conn.execute(select(dag_run.c.id, dag_run.c.state).where(
        dag_run.c.dag_id == dag_id)).all()
    tis = conn.execute(select(task_instance).where(task_instance.c.dag_id == dag_id)).all()
    history = conn.execute(select(state_transition).where(
        state_transition.c.dag_id == dag_id).order_by(state_transition.c.id)).all()
    r.runs, r.task_instances, r.transitions = len(runs), len(tis), len(history)
    r.runs_by_state = Counter(x.state for x in runs)
    _terminal(r, runs, tis)
    by_ti: dict[int, list[Any]] = defaultdict(list)
    by_run: dict[int, list[Any]] = defaultdict(list)
    for h in history:
        (by_ti if h.entity == "task_instance" else by_run)[h.entity_id].append(h)
    for ti_id, rows in by_ti.items():
        _ti_history(r, ti_id, rows)
    for run_id, rows in by_run.items():
        _chain(r, "dag run", run_id, rows, DAG_RUN_EDGES)
    _run_agrees(r, runs, tis)
    _occupancy(r, history, {t.id: t for t in tis}, pool_slots, max_active_runs, max_active_tasks)
    _triggers(r, conn, now - triggerer_dead_after)
    return r


def _terminal(r: Report, runs: list[Any], tis: list[Any]) -> None:
    for x in runs:
        if x.state not in {s.value for s in RUN_TERMINAL}:
            r.violate(f"run {x.id} ended the round {x.state}")
    for t in tis:
        if t.state not in {s.value for s in TI_TERMINAL}:
            r.violate(f"task instance {t.id} ({t.task_id}[{t.map_index}]) ended {t.state}")


def _chain(r: Report, what: str, pk: int, rows: list[Any], edges: dict[Any, Any]) -> None:
    """Every edge is in the allowlist and starts where the previous one ended: no update was
    lost, and no task instance was queued (or started) twice for one try, since a second
    ``scheduled -> queued`` needs a way back to scheduled in between."""
    previous = None
    for h in rows:
        rename = h.from_state == h.to_state  # only the name changed (Queued -> Late)
        if h.from_state is not None and not rename and (h.from_state, h.to_state) not in {
                (a.value, b.value) for a, b in edges}:
            r.violate(f"{what} {pk}: edge {h.from_state} -> {h.to_state} is not allowed")
        if previous is not None and h.from_state != previous:
            r.violate(f"{what} {pk}: history jumps from {previous} to an edge from "
                      f"{h.from_state} (id {h.id})")
        previous = h.to_state


def _ti_history(r: Report, ti_id: int, rows: list[Any]) -> None:
    _chain(r, "task instance", ti_id, rows, TASK_INSTANCE_EDGES)
    starts: Counter[int] = Counter()
    open_deferrals = 0
    paused_try: int | None = None
    for h in rows:
        if h.name == "Crashed":
            r.crashed_tries += 1
            r.zombies += (h.message or "").startswith("zombie")
            if h.to_state not in (TI.UP_FOR_RETRY.value, TI.FAILED.value):
                r.violate(f"task instance {ti_id}: a Crashed try went to {h.to_state}")
        if h.from_state == h.to_state:
            continue  # a rename (Scheduled -> Late): not a step of the try
        if h.to_state == TI.RUNNING.value:
            if paused_try == h.try_number:
                paused_try = None  # the same try coming back after a deferral or reschedule
            else:
                starts[h.try_number] += 1
                if starts[h.try_number] > 1:
                    r.violate(f"task instance {ti_id}: try {h.try_number} started twice")
        if h.from_state == TI.RUNNING.value and h.to_state in _PAUSES:
            paused_try = h.try_number
        if h.to_state == TI.DEFERRED.value:
            r.deferrals += 1
            open_deferrals += 1
        if h.to_state == TI.UP_FOR_RESCHEDULE.value:
            r.reschedules += 1
        if h.from_state == TI.DEFERRED.value:
            open_deferrals -= 1
            if h.to_state != TI.SCHEDULED.value:
                r.violate(f"task instance {ti_id}: a deferral ended {h.to_state}, not resumed")
    if open_deferrals:
        r.violate(f"task instance {ti_id}: {open_deferrals} deferrals never resumed")


def _run_agrees(r: Report, runs: list[Any], tis: list[Any]) -> None:
    states: dict[int, set[str]] = defaultdict(set)
    for t in tis:
        states[t.dag_run_id].add(t.state)
    bad = {TI.FAILED.value, TI.UPSTREAM_FAILED.value}
    for x in runs:
        if x.state == "success" and states[x.id] & bad:
            r.violate(f"run {x.id} is success with task instances {sorted(states[x.id])}")
        if x.state == "failed" and not states[x.id] & bad:
            r.violate(f"run {x.id} is failed with task instances {sorted(states[x.id])}")


def _occupancy(r: Report, history: list[Any], tis: dict[int, Any], pool_slots: dict[str, int],
               max_active_runs: int, max_active_tasks: int) -> None:
    """Replays the history: pool slots, tasks per run and running runs at every instant."""
    pools: Counter[str] = Counter()
    per_run: Counter[int] = Counter()
    running_runs = 0
    for h in history:
        if h.entity == "dag_run":
            running_runs += (h.to_state == "running") - (h.from_state == "running")
            r.max_active_runs = max(r.max_active_runs, running_runs)
            if running_runs > max_active_runs:
                r.violate(f"{running_runs} runs running at once (history id {h.id})")
            continue
        t = tis.get(h.entity_id)
        if t is None:
            continue
        delta = (h.to_state in _SLOT_STATES) - (h.from_state in _SLOT_STATES)
        if not delta:
            continue
        pools[t.pool] += delta * t.pool_slots
        per_run[t.dag_run_id] += delta
        if t.pool in pool_slots:
            r.max_pool[t.pool] = max(r.max_pool.get(t.pool, 0), pools[t.pool])
            if pools[t.pool] > pool_slots[t.pool]:
                r.violate(f"pool {t.pool} at {pools[t.pool]} slots (history id {h.id})")
        r.max_run_tasks = max(r.max_run_tasks, per_run[t.dag_run_id])
        if per_run[t.dag_run_id] > max_active_tasks:
            r.violate(f"run {t.dag_run_id} had {per_run[t.dag_run_id]} active tasks "
                      f"(history id {h.id})")


def _triggers(r: Report, conn: Connection, alive_after: Any) -> None:
    alive = {row.id for row in conn.execute(select(job.c.id).where(
        job.c.job_type == "triggerer", job.c.status == "running",
        job.c.latest_heartbeat > alive_after))}
    for row in conn.execute(select(trigger.c.id, trigger.c.triggerer_id).where(
            trigger.c.triggerer_id.is_not(None))):
        if row.triggerer_id not in alive:
            r.violate(f"trigger {row.id} is owned by triggerer {row.triggerer_id}, which is dead")


def pool_sizes(conn: Connection) -> dict[str, int]:
    return {row.name: row.slots for row in conn.execute(select(pool.c.name, pool.c.slots))}
