"""How a DAG run ends: decided from its task instances, as Airflow 3's scheduler decides it.

Mirrors ``DagRun.update_state`` and ``DagRun._tis_for_dagrun_state`` (``airflow/models/dagrun.py``)
and ``_stop_remaining_tasks`` (``airflow/models/taskinstance.py``), which the ``fail_fast`` DAG
setting (called ``fail_stop`` before Airflow 3) runs when a task instance fails for good.

Teardown tasks: the caller's ``leaf_task_ids`` are Airflow's *effective* leaves, in which a
teardown without ``on_failure_fail_dagrun`` is ignored: it is no leaf, and a task followed only by
such teardowns is one (:meth:`statewright.core.setup_teardown.SetupTeardownGraph.run_state_leaves`);
and ``fail_fast`` never stops a teardown (``teardown_task_ids`` of :func:`fail_stop_targets`).

Left out on purpose:

- mapped tasks: a task id stands for one task instance here;
- what disables deadlock detection besides deferred task instances (``depends_on_past``,
  ``depends_on_previous_tasks``, ``max_active_tis_per_dag``, ``max_active_tis_per_dagrun``): a
  caller whose tasks use such settings passes ``any_schedulable=True``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from statewright.core.states import (
    TI,
    TI_FAILED_STATES,
    TI_SUCCESS_STATES,
    TI_UNFINISHED,
    DagRunState,
    TaskInstanceState,
)

# Airflow's SCHEDULEABLE_STATES: the states from which the scheduler may schedule a task instance.
SCHEDULABLE_STATES: frozenset[TaskInstanceState] = frozenset(
    {TI.NONE, TI.UP_FOR_RETRY, TI.UP_FOR_RESCHEDULE}
)


@dataclass(frozen=True)
class TaskView:
    """The part of a task instance row that run-level decisions read."""

    task_id: str
    state: TaskInstanceState


def decide_run_state(
    tis: Sequence[TaskView],
    leaf_task_ids: Collection[str],
    any_schedulable: bool = True,
) -> DagRunState | None:
    """The state a running DAG run moves to, or ``None`` to keep it running.

    Mirrors the branches of Airflow's ``DagRun.update_state``, in order:

    1. every task instance finished and a leaf failed or is upstream_failed -> FAILED;
    2. every task instance finished and every leaf succeeded or was skipped -> SUCCESS;
    3. deadlock: some task instances are unfinished, none is deferred, and none can make progress
       (``any_schedulable`` is False) -> FAILED;
    4. otherwise the run keeps running.

    Leaves in ``removed`` state are not considered (``_tis_for_dagrun_state``); if every leaf was
    removed, a run whose task instances all finished succeeds, whatever the other task instances'
    states. Note that the run waits for *every* task instance, not only the leaves.

    ``any_schedulable`` is the caller's answer to Airflow's ``are_runnable_tasks``: True when at
    least one unfinished task instance has its dependencies met (Airflow evaluates every unfinished
    task instance, ignoring retry and reschedule waiting periods), or when evaluating dependencies
    changed some task instance's state in this pass (for example to skipped or upstream_failed).
    With :func:`statewright.core.trigger_rules.evaluate_trigger_rule`, that is: some unfinished
    task instance's decision is not ``WAIT``.
    """
    unfinished = [ti for ti in tis if ti.state in TI_UNFINISHED]
    leaves = _leaves_for_run_state(tis, leaf_task_ids)
    if not unfinished:
        if any(ti.state in TI_FAILED_STATES for ti in leaves):
            return DagRunState.FAILED
        if all(ti.state in TI_SUCCESS_STATES for ti in leaves):
            return DagRunState.SUCCESS
        return None  # unreachable with Airflow's states; kept for safety
    if _is_deadlocked(unfinished, any_schedulable):
        return DagRunState.FAILED
    return None


def _leaves_for_run_state(
    tis: Sequence[TaskView], leaf_task_ids: Collection[str]
) -> list[TaskView]:
    """Airflow's ``_tis_for_dagrun_state``: the leaf task instances, removed ones excluded."""
    leaf_ids = set(leaf_task_ids)
    return [ti for ti in tis if ti.task_id in leaf_ids and ti.state is not TI.REMOVED]


def keeps_running(states: Iterable[TaskInstanceState], any_schedulable: bool) -> bool:
    """True when ``decide_run_state`` returns ``None`` whatever the leaves: some task instance
    is unfinished and the run is not deadlocked (one deferred or awaiting input, or
    ``any_schedulable``). A big run's evaluation asks this first and builds the task views only
    when the run may end."""
    unfinished = False
    for s in states:
        if s in TI_UNFINISHED:
            if s in _WAITING:
                return True
            unfinished = True
    return unfinished and any_schedulable


_WAITING = frozenset({TI.DEFERRED, TI.AWAITING_INPUT})


def _is_deadlocked(unfinished: Sequence[TaskView], any_schedulable: bool) -> bool:
    """Airflow's ``unfinished.should_schedule and not are_runnable_tasks`` (deferred ones and
    ones awaiting a person's input wait: the run is running, not stuck)."""
    if any(ti.state in _WAITING for ti in unfinished):
        return False
    return bool(unfinished) and not any_schedulable


def fail_stop_targets(
    tis: Sequence[TaskView],
    *,
    failed_task_id: str | None = None,
    overwrite_terminal: bool = False,
    teardown_task_ids: Collection[str] = frozenset(),
) -> tuple[list[str], list[str]]:
    """What ``fail_fast`` does to the other task instances when one fails for good.

    Returns ``(to_fail, to_skip)`` in the order of ``tis``. Mirrors Airflow's
    ``_stop_remaining_tasks``, which leaves the failing task and every success or failed task
    instance alone, sets *running* ones to failed (``ti.error``: no retry, whatever retries are
    left), and sets every other one to skipped. So queued, scheduled, restarting, deferred,
    up_for_retry and up_for_reschedule task instances are all skipped, not failed: only ``running``
    is failed
    (``shutdown``, a state Airflow 3 no longer has, is skipped too).

    Airflow's loop also rewrites upstream_failed and removed task instances to skipped. statewright
    leaves terminal states to a user's clear, so those are listed only with
    ``overwrite_terminal=True``. ``failed_task_id`` is the task that failed, excluded whatever state
    the caller's view shows for it. Airflow runs this only when a task instance ends in ``failed``,
    never for ``up_for_retry``. Teardown tasks (``teardown_task_ids``) are left alone, so they
    still release what their setups acquired ("Not skipping teardown task").
    """
    to_fail: list[str] = []
    to_skip: list[str] = []
    teardowns = frozenset(teardown_task_ids)
    for ti in tis:
        if ti.task_id == failed_task_id or ti.state in (TI.SUCCESS, TI.FAILED, TI.SKIPPED):
            continue
        if ti.task_id in teardowns:
            continue
        if ti.state is TI.RUNNING:
            to_fail.append(ti.task_id)
        elif ti.state in TI_UNFINISHED or overwrite_terminal:
            to_skip.append(ti.task_id)
    return to_fail, to_skip
