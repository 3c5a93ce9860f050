"""The scheduler loop: reads persisted state, calls the pure decisions, applies transitions.

One ``run_once`` does, each step in one transaction:

1. start queued runs up to ``max_active_runs``;
2. for every running run whose task instances changed: trigger rules (none → scheduled / skipped /
   upstream_failed), due retries and reschedules (→ scheduled), fail_stop, and the run's state;
3. queue scheduled task instances to the executor within its free slots and ``max_active_tasks``;
4. now and then: zombies (running without a heartbeat) and task instances queued too long.

The loop wakes on committed transitions (a task finished) and on a timer.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import Connection, Engine

from statewright.core.clock import Clock, utcnow
from statewright.core.mapping import DEFAULT_MAX_MAP_LENGTH
from statewright.core.states import RUN, TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db import wakeups
from statewright.db.engine import is_postgres, read_snapshot, transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import jobs as job_repo
from statewright.db.repositories import run_claims
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.services.dag_view import DagView, DagViewCache
from statewright.services.loop_failures import LoopFailures
from statewright.services.scheduler import event_pass, housekeeping
from statewright.services.scheduler.capacity import (
    candidates_waiting,
    queue_in_evaluation,
    queue_scheduled,
)
from statewright.services.scheduler.due_probe import DueProbe
from statewright.services.scheduler.evaluation import RunWork, schedule_run
from statewright.services.scheduler.event_pass import EventRuns, EventScope
from statewright.services.scheduler.run_index import RunIndex

log = logging.getLogger("statewright.scheduler")
HOSTNAME = socket.gethostname()
ACTOR = Actor.SCHEDULER


Step = Callable[["Scheduler", datetime], int]
"""An extra step of the loop (``steps.scheduling_steps``); see ``due_steps`` for its ``due``."""


class Executor(Protocol):
    identity: str

    def slots_available(self) -> int: ...

    def queue_workloads(self, ti_ids: Sequence[int]) -> None: ...


@dataclass
class LoopStats:
    started_runs: int = 0
    changed: int = 0
    queued: int = 0
    finished_runs: int = 0
    reaped: int = 0
    steps_worked: int = 0

    follow_up: bool = False
    """The evaluation made a change other than scheduling a task instance (skipped, upstream
    failed, removed, expanded, a retry due, …), which may give another run work at once (its
    ``depends_on_past``)."""

    @property
    def did_work(self) -> bool:
        return bool(self.started_runs or self.changed or self.queued or self.finished_runs
                    or self.reaped)

    @property
    def another_pass_now(self) -> bool:
        """Whether the loop goes on at once rather than waiting to be woken. Not for a pass
        that only scheduled and queued task instances (each link of a chain): what they do
        next is another process's transition, which wakes the loop; a pass at once would only
        find the run waiting, and the next link would wait for that pass to end. The runs it
        started or finished, the extra steps that found work and the other changes of an
        evaluation may leave work for at once."""
        return bool(self.started_runs or self.finished_runs or self.reaped
                    or self.steps_worked or self.follow_up)


@dataclass
class SchedulerConfig:
    idle_seconds: float = 1.0
    zombie_threshold: timedelta = timedelta(seconds=60)
    queued_timeout: timedelta = timedelta(seconds=600)
    housekeeping_every: timedelta = timedelta(seconds=5)
    max_runs_to_start: int = 100
    max_map_length: int = DEFAULT_MAX_MAP_LENGTH
    """The most task instances one mapped task may expand to; more fails it."""
    big_run: int = 1000
    """A run with at least this many task instances whose evaluation (dependencies, run state)
    takes more than ``big_run_evaluation`` seconds is evaluated again only after as long again
    (its cost stays at most half of the loop; queueing goes on meanwhile). 0: never."""
    big_run_evaluation: float = 0.02
    steps_every: float = 0.5
    """While the loop is busy (passes back to back as tasks end), the extra steps (run creation
    from timetables and assets, backfills, Late names, HITL timeouts, deadlines, flow runs: all
    driven by time or by other writers, not by the task instance that just ended) run at most
    this often; a step that did work runs again on the next pass. ``run_once`` alone runs them
    every time."""
    busy_pass_seconds: float = 0.004
    """While the executor holds more tries than it has processes (each process has its next
    try waiting), a pass woken by a try's end comes at most this long after the previous pass
    began: the tries that end meanwhile are queued by one pass, not one pass each (the probe,
    the choice and the write transaction cost the same for one task instance as for ten). A
    chain's next link, or any pass while a process is idle, is never held back. 0: never."""
    only_runs: frozenset[int] | None = None
    """Limit this scheduler to these runs (``dag.test()`` on a shared database); no housekeeping
    of other runs' task instances then."""


@dataclass
class _Evaluated:
    changed: int = 0
    finished: int = 0
    queued_all: bool = False
    """The evaluation's own queueing saw every candidate: no queueing pass after it."""
    follow_up: bool = False


@dataclass(frozen=True)
class _Probe:
    queued_runs: bool
    wanted: dict[int, str]
    candidates: bool | None
    """PostgreSQL: do scheduled task instances wait to be queued? None: not read (a run is to
    be evaluated, and its evaluation queues)."""
    views: Mapping[str, DagView]
    """The running runs' DAG views, by DAG id (the queueing choice reads none again)."""


class Scheduler:
    def __init__(
        self,
        engine: Engine,
        executor: Executor,
        *,
        clock: Clock = utcnow,
        config: SchedulerConfig | None = None,
        views: DagViewCache | None = None,
        extra_steps: Sequence[Callable[[Scheduler, datetime], int]] = (),
    ) -> None:
        self.engine = engine
        self.executor = executor
        self.clock = clock
        self.config = config or SchedulerConfig()
        self.views = views or DagViewCache()
        self.extra_steps = list(extra_steps)
        self._wake = threading.Event()
        self._last_housekeeping: datetime | None = None
        self._remove_listener: Callable[[], None] | None = None
        self.job_id: int | None = None
        self._last_job_beat: datetime | None = None
        # Big runs evaluated lately: run key → monotonic time before which it waits.
        self._evaluate_after: dict[int, float] = {}
        self._steps_after = 0.0  # monotonic time before which a busy loop skips extra steps
        self._pass_began = 0.0
        self.index = RunIndex()  # the running runs' task instances, refreshed from the history
        self._due_probe = DueProbe()  # the probe's first statement, built once
        self.wake_listener: wakeups.WakeListener | None = None  # while run_forever runs (PG)
        self._scope = EventScope()  # what woke the loop: may a pass skip the probe

    def _heartbeat_job(self) -> None:
        """The scheduler's ``job`` row: a heartbeat every few seconds (health, HA peers)."""
        now = self.clock()
        if self.job_id is None or (self._last_job_beat is not None
                                   and now - self._last_job_beat < self.config.housekeeping_every):
            return
        with transaction(self.engine) as conn:
            job_repo.heartbeat(conn, self.job_id, now)
        self._last_job_beat = now

    def left_waiting(self, runs: Iterable[int], read: Iterable[int] = ()) -> None:
        """The runs whose scheduled task instances this pass's queueing read and left, and
        every run it read candidates of."""
        self._scope.left_waiting(runs, read)

    def in_scope(self, run_pk: int) -> bool:
        return self.config.only_runs is None or run_pk in self.config.only_runs

    # -- waking ----------------------------------------------------------------------------

    def wake(self) -> None:
        self._scope.need_probe()
        self._wake.set()

    def listen(self) -> None:
        """Wake on every committed transition (a task finished, a trigger fired, …)."""
        if self._remove_listener is None:
            self._remove_listener = door.add_transition_listener(self._on_events)

    def _on_events(self, events: Sequence[door.TransitionEvent]) -> None:
        # A try starting (queued → running) gives the scheduler nothing to do; anything else may.
        waking = wakeups.waking(events)
        if waking:
            self._scope.heard(waking)
            self._wake.set()

    def _listen_to_other_processes(self) -> wakeups.WakeListener | None:
        """Wake on what other processes commit (a Celery worker, a triggerer, the API server
        or the CLI, another scheduler; ``db.wakeups``), not only on the idle timer."""
        return wakeups.WakeListener.start_for(self.engine.url, wakeups.SCHEDULER, self.wake)

    def run_forever(self, stop: threading.Event) -> None:
        self.listen()
        with transaction(self.engine) as conn:
            self.job_id = job_repo.register(conn, job_type="scheduler", hostname=HOSTNAME,
                                            pid=os.getpid(), capacity=None, now=self.clock())
            self._warn_of_other_schedulers_on_sqlite(conn)
        try:
            self.recover(self.clock())
        except Exception:
            log.exception("recovery at start failed; the zombie reaper will catch up")
        failures = LoopFailures("scheduler loop", log, period=self.config.idle_seconds)
        self.wake_listener = self._listen_to_other_processes()
        try:
            while not stop.is_set():
                try:
                    self._heartbeat_job()
                    stats = self._pass()
                except Exception as exc:
                    stop.wait(failures.failed(exc))
                    continue
                failures.succeeded()
                if stats.another_pass_now:
                    continue
                self._wait()
                self._hold_while_busy(stop)
        finally:
            if self.job_id is not None:
                with contextlib.suppress(Exception), transaction(self.engine) as conn:
                    job_repo.stop(conn, self.job_id, self.clock())
            if self._remove_listener:
                self._remove_listener()
                self._remove_listener = None
            if self.wake_listener is not None:
                self.wake_listener.stop()
                self.wake_listener = None

    def _wait(self) -> None:
        """Until woken, or the idle time passes: then the pass reads the probe (time may have
        given a run work: a retry delay, a reschedule)."""
        if not self._wake.wait(self._idle_wait()):
            self._scope.need_probe()
        self._wake.clear()

    def _hold_while_busy(self, stop: threading.Event) -> None:
        """``busy_pass_seconds``: wait out the rest of it while the executor's processes all
        have a try waiting."""
        backlog = getattr(self.executor, "backlog", None)
        if self.config.busy_pass_seconds <= 0 or backlog is None or backlog() <= 0:
            return
        rest = self._pass_began + self.config.busy_pass_seconds - time.monotonic()
        if rest > 0:
            stop.wait(rest)

    def _warn_of_other_schedulers_on_sqlite(self, conn: Connection) -> None:
        """Schedulers serialize their queueing on PostgreSQL only: on SQLite, a second one could
        pass a pool's or a run's limit. Say so at start."""
        if conn.dialect.name != "sqlite" or self.config.only_runs is not None:
            return
        recent = self.clock() - 2 * self.config.housekeeping_every
        others = {
            pk for pk, row in job_repo.get_many(
                conn, job_repo.alive_ids(conn, "scheduler", recent) - {self.job_id}).items()
            # a scheduler of this host whose process is gone crashed; it is not running
            if row.hostname != HOSTNAME or (row.pid and housekeeping.pid_alive(row.pid))
        }
        if others:
            log.warning(
                "Another scheduler (job %s) is running on this SQLite database. Run one "
                "scheduler per SQLite file, or move to PostgreSQL for several: on SQLite, two "
                "schedulers queueing at once can pass a pool's or a run's limits.",
                ", ".join(str(i) for i in sorted(others)))

    # -- one loop ----------------------------------------------------------------------------

    def _pass(self) -> LoopStats:
        """One pass of the service loop: the extra steps only when due (``steps_every``)."""
        self._pass_began = time.monotonic()
        steps = self._pass_began >= self._steps_after
        runs = self._scope.take()  # (``event_pass``; ``run_once`` reads the probe with steps)
        if any(t <= self._pass_began for t in self._evaluate_after.values()):
            runs = None  # a big run's paced evaluation is due: the probe says if it has work
        stats = self.run_once(steps=steps, runs=runs)
        if steps and not stats.steps_worked:
            self._steps_after = time.monotonic() + self.config.steps_every
        return stats

    def run_once(self, *, steps: bool = True, runs: EventRuns | None = None) -> LoopStats:
        """One pass. ``runs``: look at these without reading the probe first
        (``event_pass``); not with ``steps``."""
        self._wake.clear()
        stats = LoopStats()
        now = self.clock()
        probed = runs is None or steps
        due: list[Step] = []
        unread: frozenset[int] = frozenset()
        if not probed:
            heard = runs or EventRuns()
            unread = event_pass.unread(heard, self._scope.waiting())
            wanted, candidates = event_pass.to_evaluate(
                self.engine, heard, [s.value for s in _UNFINISHED_BUSY], unread)
            probe = _Probe(False, wanted, candidates, self._scope.views())
        else:
            due, probe = self._probe(now, self.extra_steps if steps else ())
        for step in due:
            stats.steps_worked += step(self, now)
        stats.changed += stats.steps_worked
        if stats.steps_worked:
            _, probe = self._probe(now, ())  # what the steps created or changed
        if probe.queued_runs:
            stats.started_runs = self._start_queued_runs(now)
        ev = self._schedule_running_runs(now, probe.wanted, probed=probed)
        stats.changed += ev.changed
        stats.finished_runs = ev.finished
        stats.follow_up = ev.follow_up
        # What the evaluation just scheduled was not in the probe's snapshot; nothing is left
        # to queue when the evaluation's own queueing saw every candidate.
        if not ev.queued_all:
            stats.queued = queue_scheduled(
                self, now, candidates=True if ev.changed else probe.candidates,
                views=probe.views)
        if self._scope.gone_elsewhere(unread):  # (``event_pass.unread``)
            self.wake()
        if self.config.only_runs is None and (
                self._last_housekeeping is None
                or now - self._last_housekeeping >= self.config.housekeeping_every):
            self._last_housekeeping = now
            stats.reaped = self.reap(now)
        return stats

    def _probe(self, now: datetime, steps: Sequence[Step]) -> tuple[list[Step], _Probe]:
        """What this pass has to do, read in one snapshot (each read transaction costs two
        round trips on PostgreSQL, and a checkout): which of ``steps`` are due (``first_read``),
        queued runs to start, running runs to evaluate, and (where queueing is a critical
        section of its own, PostgreSQL) whether anything waits to be queued. A step that finds
        nothing takes no write lock; an idle pass is this one read transaction."""
        views: dict[str, DagView] = {}
        with read_snapshot(self.engine) as conn:
            # and index reads from here on
            due, queued = first_read(conn, now, steps, self._due_probe)
            wanted = self._runs_needing_work(conn, views)
            # No running run (in scope), no candidate: an idle pass reads no further.
            candidates = (None if wanted else is_postgres(conn) and bool(views)
                          and candidates_waiting(conn, indexed=True))
        return due, _Probe(queued, wanted, candidates, views)

    def _idle_wait(self) -> float:
        """The idle sleep, shorter when a big run waits for its next evaluation."""
        if not self._evaluate_after:
            return self.config.idle_seconds
        soonest = min(self._evaluate_after.values()) - time.monotonic()
        return max(0.0, min(self.config.idle_seconds, soonest))

    def _view(self, conn: Connection, dag_id: str, dag_hash: str) -> DagView:
        return self.views.get(dag_id, dag_hash, lambda: dag_repo.get_serialized(conn, dag_id))

    def _start_queued_runs(self, now: datetime) -> int:
        with transaction(self.engine) as conn:
            queued = [r for r in run_repo.queued_runs_to_start(conn, self.config.max_runs_to_start)
                      if self.in_scope(r.id)]
            dag_repo.lock(conn, [r.dag_id for r in queued])
            running = run_repo.count_running_by_dag(conn, [r.dag_id for r in queued])
            to_start: list[int] = []
            for r in queued:
                n = running.get(r.dag_id, 0)
                if n < r.max_active_runs:
                    running[r.dag_id] = n + 1
                    to_start.append(r.id)
            res = door.set_dag_run_state(conn, to_start, frm=RUN.QUEUED, to=RUN.RUNNING,
                                         actor=ACTOR, now=now)
            return len(res.changed)

    def _schedule_running_runs(self, now: datetime, wanted: dict[int, str] | None = None, *,
                               probed: bool = True) -> _Evaluated:
        """Evaluate the runs that need it (and queue what that scheduled, where it can).
        ``probed``: ``wanted`` is every run with work (a probe's), not some (``event_pass``)."""
        # Decide from a snapshot which runs need work; take the write lock only for those.
        if wanted is None:
            with read_snapshot(self.engine) as conn:
                wanted = self._runs_needing_work(conn)
        started = time.monotonic()
        if probed:  # a paced run no longer wanted has ended or has nothing left to do
            self._evaluate_after = {pk: t for pk, t in self._evaluate_after.items()
                                    if pk in wanted}
        wanted = {pk: d for pk, d in wanted.items()
                  if self._evaluate_after.get(pk, 0.0) <= started}
        if not wanted:
            return _Evaluated()
        try:
            done, changed, queued, queued_all = self._evaluate(wanted, now)
        except BaseException:
            self.index.forget()  # what it read since may not have been acted on
            raise
        if queued:
            self.executor.queue_workloads(queued)
        if len(done) < len(wanted):  # another scheduler evaluates one, or it ended: look again
            self._scope.need_probe()
        self._pace(done, started)
        return _Evaluated(changed + len(queued), sum(f for _, f in done), queued_all,
                          any(w.follow_up for w, _ in done))

    def _evaluate(self, wanted: dict[int, str], now: datetime
                  ) -> tuple[list[tuple[RunWork, int]], int, list[int], bool]:
        """One transaction: the runs' task instances (``run_index``), their evaluation
        (``evaluation.schedule_run``), and the queueing of what it scheduled where it can."""
        queued_all = False
        with transaction(self.engine) as conn:
            # The runs no other scheduler is evaluating (PostgreSQL), still running, with the
            # hash of each one's DAG (read in the same statement).
            claimed = run_claims.claim_with_hashes(conn, wanted)
            wanted = {pk: d for pk, d in wanted.items() if pk in claimed}
            views = {pk: self._view(conn, dag_id, h) for pk, dag_id in wanted.items()
                     if (h := claimed[pk]) is not None}
            entries = self.index.entries_for(conn, views)
            changed = 0
            done: list[tuple[RunWork, int]] = []
            for pk, view in views.items():
                w = RunWork(pk, wanted[pk], view, entries[pk])
                c, f = schedule_run(self, conn, w, now)
                done.append((w, f))
                changed += c
            queued: list[int] = []
            if changed:
                queued, queued_all = queue_in_evaluation(
                    self, conn, now, {wanted[pk]: v for pk, v in views.items()})
        return done, changed, queued, queued_all

    def _pace(self, done: list[tuple[RunWork, int]], started: float) -> None:
        """Big runs whose evaluation was slow (each pass reads and weighs all their task
        instances, under the write lock) wait as long again before the next one, so that
        queueing, whose cost does not grow with the run, keeps the loop busy meanwhile. The
        time is the whole step's, shared by its runs in proportion to their task instances."""
        took = time.monotonic() - started
        total = sum(w.entry.size for w, _ in done) or 1
        for w, finished in done:
            self._evaluate_after.pop(w.run_pk, None)
            share = took * w.entry.size / total
            if (not finished and self.config.big_run and w.entry.size >= self.config.big_run
                    and share > self.config.big_run_evaluation):
                self._evaluate_after[w.run_pk] = time.monotonic() + share

    def _runs_needing_work(self, conn: Connection, views: dict[str, DagView] | None = None
                           ) -> dict[int, str]:
        """The running runs to evaluate, by DAG id; ``views``: filled with their DAGs' views."""
        runs = [r for r in run_repo.running_runs_with_hashes(conn) if self.in_scope(r.id)]
        self.index.retain(r.id for r in runs)
        if not runs:
            return {}
        ids = [r.id for r in runs]
        # Read only what decides (never every task instance of every running run: thousands
        # deferred or awaiting input cost nothing here).
        present, idle = ti_repo.run_probes(conn, ids, _NEED_WORK,
                                           [s.value for s in _UNFINISHED_BUSY])
        hashes = {r.dag_id: r.dag_hash for r in runs if r.dag_hash is not None}
        wanted: dict[int, str] = {}
        seen: dict[str, DagView] = {}
        for r in runs:
            c = present.get(r.id, set())
            if r.dag_id not in hashes:
                continue
            view = seen[r.dag_id] = self._view(conn, r.dag_id, hashes[r.dag_id])
            if views is not None:
                views[r.dag_id] = view
            if (
                (c - {TI.FAILED.value})
                or (view.fail_stop and TI.FAILED.value in c)
                or r.id in idle
            ):
                wanted[r.id] = r.dag_id
        self._scope.remember(runs, seen)
        return wanted

    # -- housekeeping (``housekeeping.py``) -------------------------------------------------

    def reap(self, now: datetime) -> int:
        """Zombies (running, no heartbeat) and task instances queued past the timeout."""
        return housekeeping.reap(self, now)

    def recover(self, now: datetime) -> int:
        """At start: what this host's processes that are gone left running or queued."""
        return housekeeping.recover(self, now)


def first_read(conn: Connection, now: datetime, steps: Sequence[Step],
               probe: DueProbe | None = None) -> tuple[list[Step], bool]:
    """The first statement of a pass's probe: which extra steps have anything to do, and
    whether queued runs wait to start; on PostgreSQL it also has the rest of the snapshot read
    through indexes (``engine.index_reads``): one round trip for all.

    A step's ``due(now)`` gives a query (due when it has a row), a condition, or a bool; a
    step without one is always called. The step's own read and write transactions happen
    only when it has work, so an idle pass does not open one transaction per step. ``probe``
    keeps the statement built across passes (``due_probe``)."""
    stmt, params, columns, due = (probe or DueProbe()).statement(steps, now, is_postgres(conn))
    queued, *answers = conn.execute(stmt, params).one()
    due.update(i for i, yes in zip(columns, answers[:len(columns)], strict=True) if yes)
    return [step for i, step in enumerate(steps) if i in due], bool(queued)


# A run whose task instances include one of these has scheduling work (failed: under fail_stop).
_NEED_WORK = (TI.NONE.value, TI.UP_FOR_RETRY.value, TI.UP_FOR_RESCHEDULE.value, TI.FAILED.value)
_UNFINISHED_BUSY = (TI.SCHEDULED, TI.QUEUED, TI.RUNNING, TI.DEFERRED, TI.RESTARTING, TI.SHUTDOWN,
                    TI.AWAITING_INPUT)
