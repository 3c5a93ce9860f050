"""A pass woken only by tries of this process's executor that ended: its runs, without the probe.

Each pass of the scheduler begins with a probe (``Scheduler._probe``): one read transaction of
three statements that finds the running runs with work. Most passes of a busy loop are woken by
the local executor's relay of the tries it just ended (``door.relay``), and those events already
say which runs changed. When every one of them is a task instance that reached a state that can
give its downstream tasks work (success, failed, skipped, upstream_failed) and that task has
downstream tasks, the pass evaluates those runs and skips the probe: in a chain, that is the
probe's CPU taken off every link.

Any other wake-up reads the probe, as before: a timer's, another process's (``wake()``: the
API, a triggerer or a worker elsewhere), a pass whose extra steps are due (every
``steps_every``, 0.5 s), a run or task instance that changed in another way (created, cleared,
up for retry, deferred, …), a run the last probe did not see running, a task without
downstream tasks (a leaf's end may end its run: the probe's read of the busy task instances
decides that). So a run whose work comes from time (a retry delay, a reschedule) or from
elsewhere is found at the latest by the next full pass, as it was by the next pass before.
Evaluating a run that turns out to have nothing to do costs its evaluation and is harmless.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

from statewright.core.states import TI
from statewright.db.transition import ENTITY_TI

# The states whose reaching gives the task's downstream tasks something to weigh.
ENDS_FOR_DOWNSTREAM = frozenset({TI.SUCCESS.value, TI.FAILED.value, TI.SKIPPED.value,
                                 TI.UPSTREAM_FAILED.value})


class EventScope:
    """What woke the loop since the last pass: the runs of the waking events heard, or a
    wake-up that needs the probe. Thread-safe: listeners add from their threads, the loop
    takes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wanted: dict[int, str] = {}
        self._full = True  # the first pass reads the probe
        # (dag_id, run_id) → (run key, DAG view) of the running runs the last probe read.
        self._runs: dict[tuple[str, str], tuple[int, Any]] = {}

    def heard(self, events: Sequence[Any]) -> None:
        """Waking ``events`` (a scheduler's own and tries starting left out)."""
        with self._lock:
            if self._full:
                return
            for e in events:
                run = self._run_to_evaluate(e)
                if run is None:
                    self._full = True
                    self._wanted.clear()
                    return
                self._wanted[run] = e.dag_id

    def need_probe(self) -> None:
        """A wake-up that says nothing of what changed: the next pass reads the probe."""
        with self._lock:
            self._full = True
            self._wanted.clear()

    def remember(self, runs: Iterable[Any], views: dict[str, Any]) -> None:
        """The running runs a probe read (rows with ``id``, ``dag_id``, ``run_id``) and their
        DAGs' views, by DAG id."""
        self._runs = {(r.dag_id, r.run_id): (r.id, views[r.dag_id]) for r in runs
                      if r.dag_id in views}

    def take(self) -> dict[int, str] | None:
        """The runs to evaluate without the probe (run key → DAG id), or None: read it."""
        with self._lock:
            wanted, self._wanted = self._wanted, {}
            full, self._full = self._full, False
        return None if full or not wanted else wanted

    def _run_to_evaluate(self, e: Any) -> int | None:
        """The run of ``e`` if ``e`` is an end of a task with downstream tasks in a run the
        last probe saw running; else None."""
        if e.entity != ENTITY_TI or e.to not in ENDS_FOR_DOWNSTREAM:
            return None
        known = self._runs.get((e.dag_id, e.run_id))
        if known is None:
            return None
        task = known[1].tasks.get(e.task_id)
        return known[0] if task is not None and task.downstream else None
