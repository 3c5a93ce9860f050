"""The scheduler's index of its running runs' task instances, kept up to date from the history.

Reading and weighing every task instance of a run on each pass that evaluates it makes a link
of a chain of 10,000 tasks cost as much as 10,000 task instances. The index keeps, per run,
the evaluation's view of each task instance (its label, state, retry and reschedule times),
the run's graph of labels (upstreams, downstreams, topological positions) and its counts by
state. Each evaluation first reads the history (``state_transition``) written since the last
one, joined to the task instances it names as they are now, and applies those rows: the task
instances that changed are marked, and only they and their downstreams are weighed.

The database stays the only truth: the index holds nothing but rows read from it, never the
scheduler's own decisions (its writes come back through the history like anyone else's). A
run is read whole when it is first evaluated, when its DAG's version changes, when its shape
changes (a task instance created, removed or given another map index, as expansion does),
every ``full_every`` seconds, after a failed evaluation, and before the run is given its final
state (``Scheduler._schedule_run``).

History ids are in commit order on SQLite (one writer at a time). On PostgreSQL they come
from a sequence and a transaction may commit after a later id was read: the ids skipped below
the newest id read are kept as gaps and read again on every refresh until they appear; a gap
older than ``gap_ttl`` (a transaction rolled back) makes every run be read whole again.
"""

from __future__ import annotations

import gc
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from sqlalchemy import Connection

from statewright.core.states import TI, TaskInstanceState
from statewright.core.trigger_rules import TriggerRule
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.services.dag_view import DagView
from statewright.services.scheduler.expansion import RunNodes, label_map

STATE_OF = {s.value: s for s in TI}
"""A stored state's value → its state (a dict lookup: read for every task instance)."""
_WAITING = frozenset({TI.UP_FOR_RETRY, TI.UP_FOR_RESCHEDULE})


@dataclass
class RunEntry:
    """One run's task instances as last read, with the graph of their labels."""

    run_pk: int
    view: DagView
    nodes: RunNodes
    states: dict[str, TaskInstanceState]
    read_at: float
    label_of: dict[int, str] = field(default_factory=dict)
    counts: Counter[TaskInstanceState] = field(default_factory=Counter)
    waiting: set[str] = field(default_factory=set)
    """Labels in up_for_retry or up_for_reschedule (their time may come on any pass)."""
    order: list[str] = field(default_factory=list)
    position: dict[str, int] = field(default_factory=dict)
    upstream: dict[str, tuple[str, ...]] = field(default_factory=dict)
    downstream: dict[str, list[str]] = field(default_factory=dict)
    """Direct downstreams, and the labels that wait for this one as an indirect setup."""
    indirect: dict[str, list[str]] = field(default_factory=dict)
    setups: frozenset[str] = frozenset()
    rules: dict[str, TriggerRule] = field(default_factory=dict)
    always: frozenset[str] = frozenset()
    """Labels weighed on every evaluation: their decision also depends on something outside
    their upstreams (the previous run for ``depends_on_past``; an unexpanded mapped task's
    instance 0 of an upstream in its mapped task group)."""
    past_tasks: dict[str, str] = field(default_factory=dict)
    """Tasks with ``depends_on_past`` and one task instance → its label."""
    empty: frozenset[str] = frozenset()
    """Labels of empty tasks: set to success, not scheduled (``core.empty_tasks``)."""
    dirty: set[str] = field(default_factory=set)
    fresh: bool = True
    """Read whole in this pass (not only refreshed from the history)."""

    @classmethod
    def build(cls, run_pk: int, view: DagView, rows: list[Any], read_at: float) -> RunEntry:
        nodes = RunNodes.build(view, rows)
        states = {n: STATE_OF[t.state] for n, t in nodes.rows.items()}
        e = cls(run_pk, view, nodes, states, read_at)
        e.label_of = {t.id: n for n, t in nodes.rows.items()}
        e.counts = Counter(states.values())
        e.waiting = {n for n, s in states.items() if s in _WAITING}
        e.order = nodes.order()
        e.position = {n: i for i, n in enumerate(e.order)}
        e.upstream = nodes.upstream(states)
        e.indirect = label_map(view.indirect_setups, nodes)
        down: dict[str, list[str]] = defaultdict(list)
        for links in (e.upstream, e.indirect):
            for n, ups in links.items():
                for u in ups:
                    down[u].append(n)
        e.downstream = dict(down)
        e.setups = frozenset(nodes.labels(view.setups))
        tasks = view.tasks
        e.rules = {n: tasks[tid].trigger_rule for n, tid in nodes.task_of.items() if tid in tasks}
        e.past_tasks = {tid: ns[0] for tid, ns in nodes.of_task.items()
                        if len(ns) == 1 and tid in tasks and tasks[tid].depends_on_past}
        e.empty = frozenset(nodes.labels(view.empty)) if view.empty else frozenset()
        e.always = frozenset([*e.past_tasks.values(),
                              *(n for n in nodes.labels(view.mapped) if nodes.unexpanded(n))])
        return e

    @property
    def size(self) -> int:
        return len(self.states)

    def apply(self, row: Any) -> bool:
        """Take a task instance's row as it is now; False when the run's shape changed (a new
        task instance, another map index, one removed or brought back): read it whole."""
        label = self.label_of.get(row.id)
        if label is None:
            return False
        nodes = self.nodes
        if nodes.rows[label].map_index != row.map_index:
            return False
        old, new = self.states[label], STATE_OF[row.state]
        if (old is TI.REMOVED) != (new is TI.REMOVED):
            return False  # removed instances leave their downstreams' upstream counts
        nodes.rows[label] = row
        if old is not new:
            self.states[label] = new
            self.counts[old] -= 1
            self.counts[new] += 1
            if new in _WAITING:
                self.waiting.add(label)
            else:
                self.waiting.discard(label)
        self.dirty.add(label)
        return True

    def candidates(self, also: Iterable[str] = ()) -> set[str]:
        """The labels to weigh: those marked (and ``also``), their downstreams, and the
        ``always`` ones."""
        out = set(self.always)
        down = self.downstream
        for n in chain(self.dirty, also):
            out.add(n)
            out.update(down.get(n, ()))
        return out


class RunIndex:
    """Entries of the runs this scheduler evaluates, and where in the history it has read."""

    def __init__(self, *, full_every: float = 60.0, gap_ttl: float = 60.0,
                 gap_window: int = 1000, min_read: int = 1000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.full_every = full_every
        self.min_read = min_read
        """The history rows a refresh reads at most: this, or twice the task instances held."""
        self.gap_ttl = gap_ttl
        self.gap_window = gap_window
        self.clock = clock
        self.entries: dict[int, RunEntry] = {}
        self.cursor: int | None = None
        self.gaps: dict[int, float] = {}
        """PostgreSQL: history ids below the cursor not seen yet → when first missed."""

    def entries_for(self, conn: Connection, views: Mapping[int, DagView]) -> dict[int, RunEntry]:
        """Each run's entry, as the database has it in this transaction: brought up to date
        from the history, or read whole."""
        now = self.clock()
        self._refresh(conn, now)
        for e in self.entries.values():
            e.fresh = False
        whole = [pk for pk, view in views.items() if self._stale(pk, view, now)]
        if whole:
            with _collector_paused():
                rows: dict[int, list[Any]] = {pk: [] for pk in whole}
                for row in ti_repo.for_runs(conn, whole):
                    rows[row.dag_run_id].append(row)
                for pk in whole:
                    self.entries[pk] = RunEntry.build(pk, views[pk], rows[pk], now)
        return {pk: self.entries[pk] for pk in views}

    def _stale(self, run_pk: int, view: DagView, now: float) -> bool:
        e = self.entries.get(run_pk)
        return (e is None or e.view.dag_hash != view.dag_hash
                or now - e.read_at >= self.full_every)

    def read_whole(self, conn: Connection, run_pk: int, view: DagView) -> RunEntry:
        """The run read whole now (in this transaction; kept only if it commits: see
        ``forget``)."""
        with _collector_paused():
            entry = RunEntry.build(run_pk, view, ti_repo.for_runs(conn, [run_pk]), self.clock())
        self.entries[run_pk] = entry
        return entry

    def drop(self, run_pk: int) -> None:
        """Read this run whole on its next evaluation (its shape changed)."""
        self.entries.pop(run_pk, None)

    def retain(self, run_pks: Iterable[int]) -> None:
        """Keep only the entries of these runs (the running ones)."""
        keep = set(run_pks)
        for pk in [pk for pk in self.entries if pk not in keep]:
            del self.entries[pk]

    def forget(self) -> None:
        """An evaluation failed (its transaction rolled back, its marks consumed): every run
        is read whole on its next evaluation."""
        self.entries.clear()
        self.cursor = None
        self.gaps.clear()

    # -- the history --------------------------------------------------------------------------

    def _refresh(self, conn: Connection, now: float) -> None:
        if self.cursor is None or not self.entries:
            self._start(conn, now)
            return
        limit = max(self.min_read, 2 * sum(e.size for e in self.entries.values()))
        rows = ti_repo.changed_since(conn, self.cursor, list(self.gaps), limit=limit)
        if len(rows) >= limit:  # more changed than the runs hold: reading them is cheaper
            self._start(conn, now)
            return
        if conn.dialect.name == "postgresql":
            self._track_gaps([i for i, _ in rows], now)
        elif rows:
            self.cursor = max(self.cursor, rows[-1][0])
        for _, row in rows:
            if row is None:
                continue
            entry = self.entries.get(row.dag_run_id)
            if entry is not None and not entry.apply(row):
                del self.entries[row.dag_run_id]

    def _start(self, conn: Connection, now: float) -> None:
        """Read from the newest history row on (every entry is read whole from here)."""
        self.entries.clear()
        self.gaps.clear()
        if conn.dialect.name != "postgresql":
            self.cursor = transitions_log.latest_id(conn)
            return
        ids = ti_repo.history_ids_near_top(conn, self.gap_window)
        self.cursor = ids[-1] if ids else 0
        if ids:
            seen = set(ids)
            self.gaps = {i: now for i in range(max(1, self.cursor - self.gap_window + 1),
                                               self.cursor) if i not in seen}

    def _track_gaps(self, ids: list[int], now: float) -> None:
        assert self.cursor is not None
        seen = set(ids)
        for i in seen.intersection(self.gaps):
            del self.gaps[i]
        top = max((i for i in ids if i > self.cursor), default=self.cursor)
        for i in range(self.cursor + 1, top):
            if i not in seen:
                self.gaps[i] = now
        self.cursor = top
        expired = [i for i, t in self.gaps.items() if now - t >= self.gap_ttl]
        if expired:  # rolled back, or committed too late to be sure what it changed
            for i in expired:
                del self.gaps[i]
            self.entries.clear()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a run is read whole. Reading 10,000 task
    instances allocates some 100,000 containers, which starts full collections over every
    object of the process (the DAG views included): they doubled the read's time. What the
    read allocates holds no reference cycles, so nothing is left for the collector to free."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
