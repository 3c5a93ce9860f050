"""The state a task group shows for one run: the most telling state among its task instances.

Airflow's grid does the same (``agg_state`` over ``state_priority``): a failure anywhere in the
group shows first, then retries and reschedules, then work waiting or under way, then ``none``,
and only when everything is finished, success before skipped before removed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from statewright.core.states import TaskInstanceState as TI

GROUP_STATE_PRIORITY: tuple[TI, ...] = (
    TI.FAILED,
    TI.UPSTREAM_FAILED,
    TI.UP_FOR_RETRY,
    TI.UP_FOR_RESCHEDULE,
    TI.QUEUED,
    TI.SCHEDULED,
    TI.DEFERRED,
    TI.AWAITING_INPUT,
    TI.RUNNING,
    TI.RESTARTING,
    TI.SHUTDOWN,
    TI.NONE,
    TI.SUCCESS,
    TI.SKIPPED,
    TI.REMOVED,
)


@dataclass(frozen=True)
class GroupSummary:
    """A group's state in one run and how many of its task instances are in each state."""

    state: TI
    counts: dict[str, int]


def summarize_group(states: Iterable[TI | str]) -> GroupSummary | None:
    """The group's state over its task instances' states; None when it has none in the run."""
    counts = Counter(TI(s) for s in states)
    for state in GROUP_STATE_PRIORITY:
        if counts[state]:
            return GroupSummary(state, {s.value: n for s, n in sorted(counts.items())})
    return None


def group_task_ids(serialized: Mapping[str, Any], group_id: str) -> list[str]:
    """The ids of the tasks of a serialized DAG that sit in task group ``group_id`` or in a
    group nested in it; empty when the DAG has no such group."""
    parents = {g["group_id"]: g.get("parent") for g in serialized.get("task_groups") or ()}
    if group_id not in parents:
        return []

    def inside(group: str | None) -> bool:
        seen: set[str] = set()
        while group is not None and group not in seen:
            if group == group_id:
                return True
            seen.add(group)
            group = parents.get(group)
        return False

    return [t["task_id"] for t in serialized.get("tasks") or () if inside(t.get("task_group"))]
