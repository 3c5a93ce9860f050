"""Queueing scheduled task instances within capacity (Airflow's
``_executable_task_instances_to_queued``).

Candidates are the scheduled task instances of running runs of unpaused DAGs, highest
``priority_weight`` first (then the run with the earlier logical date). A candidate is queued
when, counting what this loop has queued already:

- the executor has a free slot;
- its pool exists and has ``pool_slots`` open (a pool's slots are taken by its queued and
  running task instances, and by deferred ones when the pool says ``include_deferred``); a
  task instance that needs more slots than its pool has never runs;
- its run has fewer queued + running task instances than the DAG's ``max_active_tasks``
  (per run, as in Airflow 3);
- its task has fewer queued + running task instances, over all runs, than its
  ``max_active_tis_per_dag``.

A candidate that does not fit is skipped and lower-priority ones may still go. When a whole
batch was blocked by full pools, runs or tasks, the query is repeated without them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import index_reads, is_postgres, read_snapshot, transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import pools as pool_repo
from statewright.db.repositories import scheduling as sched_repo

if TYPE_CHECKING:
    from statewright.services.scheduler.scheduler import Scheduler

log = logging.getLogger("statewright.scheduler.capacity")
ACTOR = Actor.SCHEDULER
_ROUNDS = 4


@dataclass(frozen=True)
class Candidate:
    id: int
    dag_id: str
    task_id: str
    dag_run_id: int
    pool: str
    pool_slots: int


@dataclass
class Selection:
    chosen: list[int] = field(default_factory=list)
    full_pools: set[str] = field(default_factory=set)
    full_runs: set[int] = field(default_factory=set)
    full_tasks: set[tuple[str, str]] = field(default_factory=set)


def select_to_queue(
    candidates: Sequence[Candidate],
    *,
    executor_slots: int,
    pool_open: dict[str, int],
    pool_total: Mapping[str, int],
    run_active: dict[int, int],
    run_limit: Callable[[str], int],
    task_active: dict[tuple[str, str], int],
    task_limit: Callable[[str, str], int | None],
    run_task_active: dict[tuple[int, str], int] | None = None,
    run_task_limit: Callable[[str, str], int | None] = lambda dag_id, task_id: None,
) -> Selection:
    """Which candidates (already in priority order) to queue; updates the counters given."""
    sel = Selection()
    for c in candidates:
        if len(sel.chosen) >= executor_slots:
            break
        if c.pool not in pool_open:
            sel.full_pools.add(c.pool)  # no such pool: never scheduled (Airflow warns)
            continue
        if pool_open[c.pool] <= 0:
            sel.full_pools.add(c.pool)
            continue
        if c.pool_slots > pool_total[c.pool] or c.pool_slots > pool_open[c.pool]:
            sel.full_tasks.add((c.dag_id, c.task_id))
            continue
        if run_active.get(c.dag_run_id, 0) >= run_limit(c.dag_id):
            sel.full_runs.add(c.dag_run_id)
            continue
        key = (c.dag_id, c.task_id)
        limit = task_limit(c.dag_id, c.task_id)
        if limit is not None and task_active.get(key, 0) >= limit:
            sel.full_tasks.add(key)
            continue
        in_run = (c.dag_run_id, c.task_id)
        per_run = run_task_limit(c.dag_id, c.task_id)
        if per_run is not None and run_task_active is not None:
            if run_task_active.get(in_run, 0) >= per_run:
                continue  # max_active_tis_per_dagrun: this run's other instances wait
            run_task_active[in_run] = run_task_active.get(in_run, 0) + 1
        sel.chosen.append(c.id)
        pool_open[c.pool] -= c.pool_slots
        run_active[c.dag_run_id] = run_active.get(c.dag_run_id, 0) + 1
        task_active[key] = task_active.get(key, 0) + 1
    return sel


def queue_scheduled(scheduler: Scheduler, now: datetime, *, candidates: bool | None = None,
                    views: Mapping[str, Any] | None = None) -> int:
    """Queue what fits and hand it to the executor after commit; returns how many.

    ``candidates``: whether a snapshot the caller just read found scheduled task instances
    waiting (``candidates_waiting``); None: look here. PostgreSQL takes its critical section
    only when some wait. ``views``: DAG views that snapshot read, by DAG id (not read
    again)."""
    slots = scheduler.executor.slots_available()
    if slots <= 0:
        return 0
    if not getattr(scheduler, "_default_pool_checked", False):
        with transaction(scheduler.engine) as conn:
            if pool_repo.ensure_default(conn):
                log.info("created %s with %d slots", pool_repo.DEFAULT_POOL,
                         pool_repo.DEFAULT_POOL_SLOTS)
        scheduler._default_pool_checked = True  # type: ignore[attr-defined]
    if is_postgres(scheduler.engine):
        if candidates is None:
            with read_snapshot(scheduler.engine) as conn:
                candidates = candidates_waiting(conn)
        if not candidates:
            scheduler.left_waiting(())
            return 0  # nothing to queue: no lock taken
        changed = _queue_in_critical_section(scheduler, now, slots, views)
    else:
        # SQLite (one scheduler): the choice is made on a snapshot, outside the write lock:
        # while the write transaction waits, tries only end (freeing slots) and task instances
        # only become candidates, so a choice from the snapshot never overfills a pool or a
        # run. The compare-and-set from scheduled leaves out any chosen one that moved
        # meanwhile.
        with read_snapshot(scheduler.engine) as conn:
            chosen = _choose(scheduler, conn, slots, views)
        if not chosen:
            return 0
        with transaction(scheduler.engine) as conn:
            changed = _mark_queued(scheduler, conn, chosen, now)
    if changed:
        scheduler.executor.queue_workloads(changed)
    return len(changed)


def queue_in_evaluation(scheduler: Scheduler, conn: Any, now: datetime,
                        views: Mapping[str, Any] | None = None) -> tuple[list[int], bool]:
    """Queue what fits inside the write transaction of the evaluation that just scheduled task
    instances, so that a link of a chain costs one transaction less; the caller hands what
    changed to the executor after commit. Returns (what was queued, whether the choice saw
    every candidate: no separate queueing pass is needed after it).

    On SQLite that transaction holds the file's only writer lock. On PostgreSQL, where several
    schedulers queue, it must hold every pool row as the critical section does
    (``queue_scheduled``), and it may not wait for them: it holds task-instance rows, and a
    scheduler in the critical section may be waiting for one of those. So it takes the pool
    rows only if no one holds them (``try_lock_for_queueing``); otherwise it queues nothing
    and the critical section of this pass does. ``views``: the DAG views the evaluation read
    in this transaction, by DAG id (not read again)."""
    if not getattr(scheduler, "_default_pool_checked", False):
        return [], False
    slots = scheduler.executor.slots_available()
    if slots <= 0 or not pool_repo.try_lock_for_queueing(conn):  # index reads from here on
        return [], False
    chosen = _choose(scheduler, conn, slots, views)
    # Nor may it wait for a chosen row that another evaluation holds (that one may be waiting
    # for a row of this run): those are left to the next pass.
    lockable = sched_repo.lock_unheld(conn, chosen)
    queued = _mark_queued(scheduler, conn, lockable, now) if lockable else []
    return queued, len(chosen) < slots and len(lockable) == len(chosen)


def candidates_waiting(conn: Any, *, indexed: bool = False) -> bool:
    """Are scheduled task instances of running runs waiting to be queued? (Read through the
    indexes whatever PostgreSQL's statistics say; see ``index_reads``. ``indexed``: the
    transaction reads through them already.)"""
    if not indexed:
        index_reads(conn)
    return sched_repo.any_queue_candidate(conn)


def _queue_in_critical_section(scheduler: Scheduler, now: datetime, slots: int,
                               views: Mapping[str, Any] | None) -> list[int]:
    """PostgreSQL, where several schedulers may queue at once: count and choose inside one
    transaction that holds the pool rows, so no two schedulers count the same open slot."""
    with transaction(scheduler.engine) as conn:
        pools = pool_repo.lock_for_queueing(conn)  # and index reads from here on
        chosen = _choose(scheduler, conn, slots, views, pools)
        return _mark_queued(scheduler, conn, chosen, now) if chosen else []


def _mark_queued(scheduler: Scheduler, conn: Any, chosen: list[int], now: datetime
                 ) -> list[int]:
    """scheduled → queued for this scheduler's executor (compare-and-set); what changed, in
    the order chosen (priority weight first: the order the executor starts them in), not the
    order the database returned the rows in."""
    changed = set(door.set_task_instance_state(
        conn, chosen, frm=TI.SCHEDULED, to=TI.QUEUED, actor=ACTOR, now=now,
        values={"executor": getattr(scheduler.executor, "identity", None)}).changed)
    return [pk for pk in chosen if pk in changed]


def _choose(scheduler: Scheduler, conn: Any, slots: int,
            known: Mapping[str, Any] | None = None, pools: Sequence[Any] | None = None
            ) -> list[int]:
    # The candidates first: most loops of a busy scheduler find some, and an idle one stops
    # after this one read. (A full pool's candidates are left out from the second round on.)
    first = sched_repo.queue_candidates(conn, slots * 4)
    read = {r.id: r.dag_run_id for r in first}
    if not first:
        scheduler.left_waiting(())
        return []
    stats = pool_repo.slot_stats(conn, scheduled=False, pools=pools)
    pool_open = {name: s.open for name, s in stats.items()}
    pool_total = {name: s.slots for name, s in stats.items()}
    views: dict[str, Any] = dict(known or {})
    run_active: dict[int, int] = {}
    task_active: dict[tuple[str, str], int] = {}
    run_task_active: dict[tuple[int, str], int] = {}
    chosen: list[int] = []
    skip_pools = {name for name, n in pool_open.items() if n <= 0}
    skip_runs: set[int] = set()
    skip_tasks: set[tuple[str, str]] = set()

    def view(dag_id: str) -> Any:
        if dag_id not in views:
            hashes = dag_repo.get_hashes(conn, [dag_id])
            views[dag_id] = scheduler.views.get(
                dag_id, hashes[dag_id], lambda: dag_repo.get_serialized(conn, dag_id)
            ) if dag_id in hashes else None
        return views[dag_id]

    def run_limit(dag_id: str) -> int:
        v = view(dag_id)
        return v.max_active_tasks if v is not None else 16

    def task_limit(dag_id: str, task_id: str) -> int | None:
        v = view(dag_id)
        task = v.tasks.get(task_id) if v is not None else None
        return None if task is None else task.max_active_tis_per_dag

    def run_task_limit(dag_id: str, task_id: str) -> int | None:
        v = view(dag_id)
        task = v.tasks.get(task_id) if v is not None else None
        return None if task is None else task.max_active_tis_per_dagrun

    for round_ in range(_ROUNDS):
        limit = (slots - len(chosen)) * 4
        # The filters the rows in hand were read with: none for the first read.
        used = ((set(), set(), set()) if round_ == 0 else
                (set(skip_pools), set(skip_runs), set(skip_tasks)))
        rows = first if round_ == 0 else sched_repo.queue_candidates(
            conn, limit, skip_pools=skip_pools, skip_runs=skip_runs, skip_tasks=skip_tasks)
        read.update((r.id, r.dag_run_id) for r in rows)
        taken = set(chosen)
        rows = [r for r in rows if r.id not in taken and scheduler.in_scope(r.dag_run_id)]
        if not rows:
            break
        run_active.update({k: v for k, v in sched_repo.active_by_run(
            conn, {r.dag_run_id for r in rows} - set(run_active)).items()})
        # Only tasks with a max_active_tis_per_dag need their active count.
        keys = {(r.dag_id, r.task_id) for r in rows
                if task_limit(r.dag_id, r.task_id) is not None} - set(task_active)
        task_active.update(sched_repo.active_by_task(conn, keys))
        for key in keys:
            task_active.setdefault(key, 0)
        in_runs = {(r.dag_run_id, r.task_id) for r in rows
                   if run_task_limit(r.dag_id, r.task_id) is not None} - set(run_task_active)
        run_task_active.update(sched_repo.active_by_run_task(conn, in_runs))
        for in_run in in_runs:
            run_task_active.setdefault(in_run, 0)
        sel = select_to_queue(
            [Candidate(r.id, r.dag_id, r.task_id, r.dag_run_id, r.pool, r.pool_slots)
             for r in rows],
            executor_slots=slots - len(chosen), pool_open=pool_open, pool_total=pool_total,
            run_active=run_active, run_limit=run_limit, task_active=task_active,
            task_limit=task_limit, run_task_active=run_task_active,
            run_task_limit=run_task_limit)
        chosen += sel.chosen
        skip_pools |= sel.full_pools
        skip_runs |= sel.full_runs
        skip_tasks |= sel.full_tasks
        # Read again only when that read can leave out more than the last one did.
        new_filters = skip_pools - used[0] or skip_runs - used[1] or skip_tasks - used[2]
        if len(chosen) >= slots or len(rows) < limit or not new_filters:
            break
    taken = set(chosen)
    scheduler.left_waiting({run for pk, run in read.items()
                            if pk not in taken and scheduler.in_scope(run)}, read.values())
    return chosen
