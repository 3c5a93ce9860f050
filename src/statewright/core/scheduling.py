"""Dependency planning for one DAG run: which task instances in ``none`` move, and where to.

Pure: takes the DAG's shape and the task instances' current states, returns target states. The
pass walks the tasks in topological order and feeds each decision to the tasks below it, so an
``upstream_failed`` or ``skipped`` propagates down a whole chain in one scheduler loop.
"""

from __future__ import annotations

import heapq
from collections import ChainMap
from collections.abc import Collection, Iterable, Mapping, Sequence

from statewright.core.states import TI, TaskInstanceState
from statewright.core.trigger_rules import (
    DepDecision,
    TriggerRule,
    UpstreamSummary,
    evaluate_dependencies,
)

_DECISION_TO_STATE: dict[DepDecision, TaskInstanceState] = {
    DepDecision.RUN: TI.SCHEDULED,
    DepDecision.SKIP: TI.SKIPPED,
    DepDecision.UPSTREAM_FAILED: TI.UPSTREAM_FAILED,
}


def plan_dependencies(
    order: Sequence[str],
    upstream: Mapping[str, Sequence[str]],
    rules: Mapping[str, TriggerRule],
    states: Mapping[str, TaskInstanceState],
    *,
    blocked: frozenset[str] = frozenset(),
    setups: Collection[str] = frozenset(),
    indirect_setups: Mapping[str, Collection[str]] | None = None,
    empty: Collection[str] = frozenset(),
) -> dict[str, TaskInstanceState]:
    """Return ``task_id → new state`` for task instances now in ``none``.

    ``order`` is a topological order of the DAG's tasks; ``states`` the current state of each
    task instance of the run (tasks without a task instance are ignored as upstreams, as a
    task added to the DAG after the run started has no say over older tasks). ``blocked`` names
    tasks that may not be scheduled for other reasons (e.g. depends_on_past); they may still be
    skipped or set upstream_failed.

    ``setups`` are the DAG's setup tasks (``all_done_setup_success`` looks at the direct upstream
    ones); ``indirect_setups`` maps a task to the setups it waits for although they are not its
    direct upstreams (Airflow's setup constraint; see
    :meth:`statewright.core.setup_teardown.SetupTeardownGraph.indirect_setups`).

    ``empty`` names the task instances that run nothing (``statewright.core.empty_tasks``):
    when they would be scheduled they go to ``success`` instead, and the tasks below them are
    decided from that in the same pass.
    """
    current = dict(states)
    decide = _Decider(upstream, rules, current, {}, blocked, frozenset(setups),
                      indirect_setups or {}, empty)
    planned: dict[str, TaskInstanceState] = {}
    for task_id in order:
        if current.get(task_id) is not TI.NONE:
            continue
        target = decide(task_id)
        if target is not None:
            planned[task_id] = target
            current[task_id] = target
    return planned


def plan_changed(
    candidates: Iterable[str],
    position: Mapping[str, int],
    upstream: Mapping[str, Sequence[str]],
    downstream: Mapping[str, Sequence[str]],
    rules: Mapping[str, TriggerRule],
    states: Mapping[str, TaskInstanceState],
    *,
    blocked: frozenset[str] = frozenset(),
    setups: Collection[str] = frozenset(),
    indirect_setups: Mapping[str, Collection[str]] | None = None,
    empty: Collection[str] = frozenset(),
) -> dict[str, TaskInstanceState]:
    """``plan_dependencies`` for the task instances whose dependencies may have changed.

    ``candidates`` are the task instances to weigh: those whose upstreams (direct, or setups
    through ``indirect_setups``) changed state since they were last planned, and those planned
    every time (``blocked`` ones, say). A decision feeds the task instances ``downstream`` of
    it (direct downstreams and those that wait for it as an indirect setup), which are then
    weighed too, in topological order (``position``: each task instance's place in it). The
    answer is ``plan_dependencies``'s whenever every task instance in ``none`` outside the
    candidates would wait: its cost follows what changed, not the size of the run.
    """
    # ``states`` may be a layer of changes over the states read (``ChainMap``): read it as a
    # plain dict under one small dict of changes (this pass's and the decisions made here).
    base: Mapping[str, TaskInstanceState] = states
    changes: dict[str, TaskInstanceState] = {}
    if isinstance(states, ChainMap):
        *layers, base = states.maps
        for layer in reversed(layers):
            changes.update(layer)
    decide = _Decider(upstream, rules, base, changes, blocked, frozenset(setups),
                      indirect_setups or {}, empty)
    decided: dict[str, TaskInstanceState] = {}
    queued = {n for n in candidates if n in position}
    heap = [(position[n], n) for n in queued]
    heapq.heapify(heap)
    while heap:
        _, task_id = heapq.heappop(heap)
        if decide.state(task_id) is not TI.NONE:
            continue
        target = decide(task_id)
        if target is None:
            continue
        decided[task_id] = changes[task_id] = target
        for d in downstream.get(task_id, ()):
            if d not in queued and d in position:
                queued.add(d)
                heapq.heappush(heap, (position[d], d))
    return decided


class _Decider:
    """The decision for one task instance in ``none`` from its upstreams' current states:
    ``changes`` over ``base`` (a label in neither has no task instance and is left out)."""

    def __init__(self, upstream: Mapping[str, Sequence[str]], rules: Mapping[str, TriggerRule],
                 base: Mapping[str, TaskInstanceState], changes: dict[str, TaskInstanceState],
                 blocked: frozenset[str], setups: frozenset[str],
                 indirect: Mapping[str, Collection[str]],
                 empty: Collection[str] = frozenset()) -> None:
        self.upstream, self.rules, self.base, self.changes = upstream, rules, base, changes
        self.blocked, self.setups, self.indirect = blocked, setups, indirect
        self.empty = empty

    def state(self, label: str) -> TaskInstanceState | None:
        changes = self.changes
        return changes[label] if label in changes else self.base.get(label)

    def _states(self, labels: Iterable[str]) -> list[TaskInstanceState]:
        changes, get = self.changes, self.base.get
        found = ([changes[u] if u in changes else get(u) for u in labels] if changes
                 else [get(u) for u in labels])
        return [s for s in found if s is not None]

    def __call__(self, task_id: str) -> TaskInstanceState | None:
        direct = self.upstream.get(task_id, ())
        setups = self.setups
        summary = UpstreamSummary.from_states(
            self._states(direct), self._states([u for u in direct if u in setups]) if setups
            else ())
        ind = self._states(self.indirect.get(task_id, ()))
        decision = evaluate_dependencies(
            self.rules[task_id], summary, UpstreamSummary.from_states(ind) if ind else None
        )
        if decision is DepDecision.WAIT or (decision is DepDecision.RUN
                                           and task_id in self.blocked):
            return None
        if decision is DepDecision.RUN and task_id in self.empty:
            return TI.SUCCESS  # nothing to run: no executor (Airflow's EmptyOperator)
        return _DECISION_TO_STATE[decision]
