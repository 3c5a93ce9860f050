"""Dependency planning for one DAG run: which task instances in ``none`` move, and where to.

Pure: takes the DAG's shape and the task instances' current states, returns target states. The
pass walks the tasks in topological order and feeds each decision to the tasks below it, so an
``upstream_failed`` or ``skipped`` propagates down a whole chain in one scheduler loop.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

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
    """
    current = dict(states)
    setup_ids = frozenset(setups)
    indirect = indirect_setups or {}
    planned: dict[str, TaskInstanceState] = {}
    for task_id in order:
        if current.get(task_id) is not TI.NONE:
            continue
        direct = [u for u in upstream.get(task_id, ()) if u in current]
        summary = UpstreamSummary.from_states(
            [current[u] for u in direct], [current[u] for u in direct if u in setup_ids]
        )
        ind = [current[s] for s in indirect.get(task_id, ()) if s in current]
        decision = evaluate_dependencies(
            rules[task_id], summary, UpstreamSummary.from_states(ind) if ind else None
        )
        if decision is DepDecision.WAIT:
            continue
        if decision is DepDecision.RUN and task_id in blocked:
            continue
        target = _DECISION_TO_STATE[decision]
        planned[task_id] = target
        current[task_id] = target
    return planned
