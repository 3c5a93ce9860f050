"""Dependency planning for one DAG run: which task instances in ``none`` move, and where to.

Pure: takes the DAG's shape and the task instances' current states, returns target states. The
pass walks the tasks in topological order and feeds each decision to the tasks below it, so an
``upstream_failed`` or ``skipped`` propagates down a whole chain in one scheduler loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from statewright.core.states import TI, TaskInstanceState
from statewright.core.trigger_rules import (
    DepDecision,
    TriggerRule,
    UpstreamSummary,
    evaluate_trigger_rule,
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
) -> dict[str, TaskInstanceState]:
    """Return ``task_id → new state`` for task instances now in ``none``.

    ``order`` is a topological order of the DAG's tasks; ``states`` the current state of each
    task instance of the run (tasks without a task instance are ignored as upstreams, as a
    task added to the DAG after the run started has no say over older tasks). ``blocked`` names
    tasks that may not be scheduled for other reasons (e.g. depends_on_past); they may still be
    skipped or set upstream_failed.
    """
    current = dict(states)
    planned: dict[str, TaskInstanceState] = {}
    for task_id in order:
        if current.get(task_id) is not TI.NONE:
            continue
        ups = [current[u] for u in upstream.get(task_id, ()) if u in current]
        decision = evaluate_trigger_rule(rules[task_id], UpstreamSummary.from_states(ups))
        if decision is DepDecision.WAIT:
            continue
        if decision is DepDecision.RUN and task_id in blocked:
            continue
        target = _DECISION_TO_STATE[decision]
        planned[task_id] = target
        current[task_id] = target
    return planned
