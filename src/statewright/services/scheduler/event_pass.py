"""A pass woken only by tries of this process's executor that ended: its runs, without the probe.

Each pass of the scheduler begins with a probe (``Scheduler._probe``): one read transaction of
three statements that finds the running runs with work. Most passes of a busy loop are woken by
the local executor's relay of the tries it just ended (``door.relay``), and those events already
say which runs changed. When every one of them is a task instance that reached an end (success,
failed, skipped, upstream_failed) in a run the last probe saw running, the pass skips the probe:

- the end of a task with downstream tasks gives those something to weigh: its run is evaluated
  (in a chain, the probe's CPU taken off every link);
- the end of a task without downstream tasks (a leaf: every task of a fan-out) can only end its
  run: one statement reads whether any of the run's task instances is still busy (scheduled,
  queued, running, deferred, …), and only a run with none left is evaluated (where it ends).
  A leaf that failed in a ``fail_stop`` DAG is evaluated at once. A run in which the last
  queueing left scheduled task instances it read (``EventScope.left_waiting``: a fan-out wider
  than the executor's slots) is busy without that read, and on PostgreSQL the pass goes to the
  queueing without first reading whether candidates wait: in a big fan-out's steady state an
  event pass reads nothing before its queueing. If that queueing no longer names such a run
  (another scheduler took its candidates), the loop is woken for the probe at once.

Any other wake-up reads the probe, as before: a timer's, another process's (``wake()``: the
API, a triggerer or a worker elsewhere), a pass whose extra steps are due (every
``steps_every``, 0.5 s), a run or task instance that changed in another way (created, cleared,
up for retry, deferred, …), a run the last probe did not see running, an end in a DAG with a
``depends_on_past`` task (the end may let the next run's task instance go: only the probe reads
the other runs). So a run whose work comes from time (a retry delay, a reschedule) or from
elsewhere is found at the latest by the next full pass, as it was by the next pass before.
Evaluating a run that turns out to have nothing to do costs its evaluation and is harmless.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from statewright.core.states import TI
from statewright.db.engine import index_reads, is_postgres, read_snapshot
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.transition import ENTITY_TI
from statewright.services.scheduler.capacity import candidates_waiting

# The states whose reaching gives the task's downstream tasks something to weigh.
ENDS_FOR_DOWNSTREAM = frozenset({TI.SUCCESS.value, TI.FAILED.value, TI.SKIPPED.value,
                                 TI.UPSTREAM_FAILED.value})


@dataclass
class EventRuns:
    """The runs a pass looks at without the probe (run key → DAG id)."""

    evaluate: dict[int, str] = field(default_factory=dict)
    """Runs in which a task with downstream tasks ended: evaluated."""
    leaves: dict[int, str] = field(default_factory=dict)
    """Runs in which only tasks without downstream tasks ended: evaluated if none of their task
    instances is busy any more (``to_evaluate``)."""

    def __bool__(self) -> bool:
        return bool(self.evaluate or self.leaves)


class EventScope:
    """What woke the loop since the last pass: the runs of the waking events heard, or a
    wake-up that needs the probe. Thread-safe: listeners add from their threads, the loop
    takes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._heard = EventRuns()
        self._full = True  # the first pass reads the probe
        # (dag_id, run_id) → (run key, DAG view) of the running runs the last probe read.
        self._runs: dict[tuple[str, str], tuple[int, Any]] = {}
        self._views: Mapping[str, Any] = {}
        self._waiting: frozenset[int] = frozenset()
        self._read: frozenset[int] = frozenset()

    def heard(self, events: Sequence[Any]) -> None:
        """Waking ``events`` (a scheduler's own and tries starting left out)."""
        with self._lock:
            if self._full:
                return
            for e in events:
                found = self._run_of(e)
                if found is None:
                    self._full = True
                    self._heard = EventRuns()
                    return
                run, leaf = found
                (self._heard.leaves if leaf else self._heard.evaluate)[run] = e.dag_id

    def need_probe(self) -> None:
        """A wake-up that says nothing of what changed: the next pass reads the probe."""
        with self._lock:
            self._full = True
            self._heard = EventRuns()

    def remember(self, runs: Iterable[Any], views: dict[str, Any]) -> None:
        """The running runs a probe read (rows with ``id``, ``dag_id``, ``run_id``) and their
        DAGs' views, by DAG id."""
        self._runs = {(r.dag_id, r.run_id): (r.id, views[r.dag_id]) for r in runs
                      if r.dag_id in views}
        self._views = dict(views)
        self._waiting = self._read = frozenset()  # the pass's queueing says again

    def left_waiting(self, runs: Iterable[int], read: Iterable[int] = ()) -> None:
        """The runs in which the last queueing read scheduled task instances and left them
        (no slot, a pool or a limit full): busy until a queueing takes them. A change to them
        by another process (a clear, a mark) wakes the loop with the probe (``need_probe``),
        which forgets these (``remember``); another scheduler's queueing wakes no one, and the
        next queueing here, finding them gone, no longer names the run (``unread``). ``read``:
        every run that queueing read candidates of (those it took all of included)."""
        self._waiting = frozenset(runs)
        self._read = frozenset(read)

    def waiting(self) -> frozenset[int]:
        """The runs ``left_waiting`` named since the last probe."""
        return self._waiting

    def gone_elsewhere(self, unread: frozenset[int]) -> bool:
        """Whether the last queueing found no candidate left of a run in ``unread``."""
        return bool(unread - self._waiting - self._read)

    def views(self) -> Mapping[str, Any]:
        """The DAG views the last probe read, by DAG id (read only: ``remember`` replaces them
        whole): an event pass queues with them, as a probed pass queues with its probe's. A DAG
        changed since reaches the queueing at the next probe (the extra steps' pass: at most
        ``steps_every`` apart while busy)."""
        return self._views

    def take(self) -> EventRuns | None:
        """The runs to look at without the probe, or None: read it."""
        with self._lock:
            heard, self._heard = self._heard, EventRuns()
            full, self._full = self._full, False
        return None if full or not heard else heard

    def _run_of(self, e: Any) -> tuple[int, bool] | None:
        """The run of ``e`` and whether only a leaf ended (the run is evaluated if nothing in
        it is busy), if ``e`` is a task's end in a run the last probe saw running, of a DAG
        without ``depends_on_past``; else None."""
        if e.entity != ENTITY_TI or e.to not in ENDS_FOR_DOWNSTREAM:
            return None
        known = self._runs.get((e.dag_id, e.run_id))
        if known is None:
            return None
        run, view = known
        task = view.tasks.get(e.task_id)
        if task is None or view.depends_on_past:
            return None
        leaf = not task.downstream and not (view.fail_stop and e.to == TI.FAILED.value)
        return run, leaf


def to_evaluate(engine: Engine, runs: EventRuns, busy: Sequence[str],
                unread: frozenset[int] = frozenset()) -> tuple[dict[int, str], bool | None]:
    """The runs of ``runs`` to evaluate: the ``evaluate`` ones, and the ``leaves`` ones none of
    whose task instances is in ``busy`` (one statement; the runs of ``unread`` have scheduled
    ones left: not read). With none to evaluate on PostgreSQL, also whether scheduled task
    instances wait to be queued, read in the same snapshot (as the probe does), or True when
    ``unread`` says so; None where not known."""
    wanted = dict(runs.evaluate)
    leaves = [pk for pk in runs.leaves if pk not in wanted and pk not in unread]
    if not leaves:
        return wanted, (True if unread else None)
    with read_snapshot(engine) as conn:
        index_reads(conn)
        idle = ti_repo.runs_without_states(conn, leaves, busy)
        wanted.update({pk: runs.leaves[pk] for pk in idle})
        candidates = (None if wanted or not is_postgres(conn)
                      else candidates_waiting(conn, indexed=True))
    return wanted, candidates


def unread(runs: EventRuns, waiting: frozenset[int]) -> frozenset[int]:
    """The runs of ``runs``' leaves that ``to_evaluate`` need not read: named in ``waiting``,
    and not evaluated anyway. If the pass's queueing then reads no candidate of one
    (``EventScope.gone_elsewhere``), they went elsewhere (another scheduler's queueing wakes no
    other scheduler), and the run may have nothing busy left: the caller wakes the loop for the
    probe rather than leave it to the timer."""
    return frozenset(pk for pk in runs.leaves if pk in waiting and pk not in runs.evaluate)
