"""The evaluation of one running run: retries due, fail_stop, trigger rules, the run's state.

The run's task instances come from the scheduler's index (``run_index.py``): read whole in this
pass (``entry.fresh``), every task instance in ``none`` is weighed; refreshed from the history,
only those whose upstreams changed since the last evaluation (and their downstreams as the
decisions propagate). The run's final state is decided only from a whole read of it.
"""

from __future__ import annotations

from collections import ChainMap, Counter, defaultdict
from collections.abc import MutableMapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from statewright.core import empty_tasks
from statewright.core.mapping import ti_label
from statewright.core.run_state import TaskView as RunTaskView
from statewright.core.run_state import decide_run_state, fail_stop_targets, keeps_running
from statewright.core.scheduling import plan_changed, plan_dependencies
from statewright.core.states import RUN, TI, TI_UNFINISHED, TaskInstanceState
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.services.dag_view import DagView
from statewright.services.scheduler.expansion import (
    RunNodes,
    expand,
    revise,
    settle_in_group,
    waiting_in_group,
)
from statewright.services.scheduler.failed_runs import pause_after_failed_run
from statewright.services.scheduler.past import blocked_by_past
from statewright.services.scheduler.run_index import STATE_OF, RunEntry
from statewright.services.scheduler.task_dates import waiting_on_absent
from statewright.services.worker.dag_callbacks import enqueue_run_callbacks

if TYPE_CHECKING:
    from statewright.services.scheduler.scheduler import Scheduler

ACTOR = Actor.SCHEDULER
States = MutableMapping[str, TaskInstanceState]


@dataclass
class RunWork:
    run_pk: int
    dag_id: str
    view: DagView
    entry: RunEntry
    follow_up: bool = False  # a change other than none → scheduled (LoopStats.follow_up)


def schedule_run(s: Scheduler, conn: Connection, w: RunWork, now: datetime) -> tuple[int, int]:
    """Evaluate one run; returns (task instances changed, runs finished)."""
    e, view = w.entry, w.view
    nodes = e.nodes
    # This pass's changes go to a layer of their own: the entry keeps what was read.
    states: States = dict(e.states) if e.fresh else ChainMap({}, e.states)
    gone = _remove_gone(conn, e, states, now) if e.fresh else 0
    changed = gone + _due(conn, e, states, now)

    # fail_stop: a failed task stops the rest of the run.
    if view.fail_stop and e.counts[TI.FAILED] > 0:
        changed += _fail_stop(conn, w, nodes, states, now)

    # Trigger rules: every instance of a task depends on every instance of its upstreams.
    blocked = blocked_by_past(conn, w.run_pk, view,
                              {tid: states[n] for tid, n in e.past_tasks.items()})
    blocked_labels = frozenset(nodes.labels(blocked))
    # Waiting on a task outside its dates (no task instance here): never scheduled, and,
    # unlike depends_on_past, not a reason for the run to wait (Airflow's deadlock).
    never = blocked_labels | frozenset(nodes.labels(waiting_on_absent(conn, w.run_pk, view)))
    if e.fresh:
        planned = plan_dependencies(e.order, e.upstream, e.rules, states, blocked=never,
                                    setups=e.setups, indirect_setups=e.indirect,
                                    empty=e.empty)
    else:
        assert isinstance(states, ChainMap)  # what this pass changed so far counts as changed
        planned = plan_changed(e.candidates(states.maps[0]), e.position, e.upstream,
                               e.downstream, e.rules, states, blocked=never,
                               setups=e.setups, indirect_setups=e.indirect, empty=e.empty)
    e.dirty.clear()
    # A mapped task whose dependencies are met expands instead of being scheduled; one
    # cleared as a whole is counted again.
    revised = revise(conn, w.run_pk, nodes, planned, states=states,
                     max_map_length=s.config.max_map_length, actor=ACTOR, now=now)
    changed += revised
    to_expand = [n for n, target in planned.items()
                 if target is TI.SCHEDULED and nodes.unexpanded(n)]
    for n in waiting_in_group(nodes, to_expand, states):
        to_expand.remove(n)
        del planned[n]
    grouped: dict[TaskInstanceState, list[int]] = defaultdict(list)
    for n, target in planned.items():
        if n not in to_expand:
            grouped[target].append(nodes.rows[n].id)
    # Removals, due retries, fail_stop, revisions: changes that may give work at once.
    w.follow_up = changed > 0
    for target, ids in grouped.items():
        moved = len(door.set_task_instance_state(
            conn, ids, frm=TI.NONE, to=target, actor=ACTOR, now=now,
            **(_empty_success(now) if target is TI.SUCCESS else {})).changed)
        w.follow_up |= bool(moved) and target is not TI.SCHEDULED
        changed += moved
    states.update({n: t for n, t in planned.items() if n not in to_expand})
    if to_expand:
        w.follow_up = True
        changed += expand(conn, w.run_pk, nodes, to_expand, states=states,
                          max_map_length=s.config.max_map_length, actor=ACTOR, now=now)
        changed += settle_in_group(conn, nodes, to_expand, states=states, actor=ACTOR, now=now)
    reshaped = bool(gone or revised or to_expand)
    if not e.fresh:
        if not reshaped and _goes_on(e, states, planned, blocked_labels):
            return changed, 0
        # The run may end, or its shape changed: evaluate it again, read whole (this
        # transaction's changes included), before deciding anything about it as a whole.
        follow_up = w.follow_up
        w.entry = s.index.read_whole(conn, w.run_pk, view)
        more, finished = schedule_run(s, conn, w, now)
        w.follow_up |= follow_up
        return changed + more, finished
    if reshaped:
        s.index.drop(w.run_pk)
    return changed, _run_state(conn, w, states, planned, blocked_labels, now)


def _empty_success(now: datetime) -> dict[str, Any]:
    """An empty task's success (the planner's only ``none → success``): one try that starts
    and ends at ``now``, as Airflow's ``schedule_tis`` writes it."""
    return {"message": empty_tasks.MESSAGE, "increment_try": True,
            "values": {"start_date": now, "duration": 0.0}}


def _goes_on(e: RunEntry, states: States, planned: dict[str, TaskInstanceState],
             blocked: frozenset[str]) -> bool:
    """From the entry's counts by state and this pass's changes: the run keeps running (what
    ``keeps_running`` says of the whole run)."""
    assert isinstance(states, ChainMap)
    counts = _counts_now(e, states.maps[0])
    any_schedulable = bool(planned) or any(states.get(n) is TI.NONE for n in blocked) or any(
        k > 0 for st, k in counts.items() if st in TI_UNFINISHED and st is not TI.NONE)
    return keeps_running([st for st, k in counts.items() if k > 0], any_schedulable)


def _run_state(conn: Connection, w: RunWork, states: States,
               planned: dict[str, TaskInstanceState], blocked: frozenset[str],
               now: datetime) -> int:
    """The run's state, from its leaves (teardowns ignored unless on_failure_fail_dagrun),
    decided from the whole run."""
    nodes, view = w.entry.nodes, w.view
    any_schedulable = bool(planned) or any(
        st is not TI.NONE for st in states.values() if st in TI_UNFINISHED) or any(
        states.get(n) is TI.NONE for n in blocked)  # waits for the previous run
    if keeps_running(states.values(), any_schedulable):
        return 0  # what decide_run_state would say, without a view of each
    tis_view = [RunTaskView(n, st) for n, st in states.items()]
    task_of = {n: _task_of(n, nodes) for n in states}
    leaves = {n for n in states
              if task_of[n] in view.run_state_leaves or task_of[n] not in view.tasks}
    decided = decide_run_state(tis_view, leaves, any_schedulable=any_schedulable)
    if decided is None:
        return 0
    message = None
    if decided is RUN.FAILED and any(st in TI_UNFINISHED for st in states.values()):
        message = "deadlock: unfinished task instances can never be scheduled"
    res = door.set_dag_run_state(conn, w.run_pk, frm=RUN.RUNNING, to=decided, actor=ACTOR,
                                 now=now, message=message)
    if res.changed:  # the DAG's on_success / on_failure callback, run by an executor
        enqueue_run_callbacks(conn, res.changed, state=decided, serialized=view.raw, now=now,
                              reason=message)
        if decided is RUN.FAILED:  # max_consecutive_failed_dag_runs
            pause_after_failed_run(conn, view, w.dag_id, now)
    return len(res.changed)


def _counts_now(e: RunEntry, layer: MutableMapping[str, TaskInstanceState]
                ) -> Counter[TaskInstanceState]:
    """The entry's counts by state with this pass's changes."""
    counts = Counter(e.counts)
    for n, new in layer.items():
        old = e.states.get(n)
        if old is not None:
            counts[old] -= 1
        counts[new] += 1
    return counts


def _remove_gone(conn: Connection, e: RunEntry, states: States, now: datetime) -> int:
    """Tasks that the DAG no longer has: their unfinished instances are removed."""
    view, nodes = e.view, e.nodes
    if view.tasks.keys() >= nodes.of_task.keys():
        return 0
    gone = [t for t in nodes.rows.values() if t.task_id not in view.tasks
            and STATE_OF[t.state] in (TI.NONE, TI.SCHEDULED, TI.UP_FOR_RETRY,
                                    TI.UP_FOR_RESCHEDULE, TI.AWAITING_INPUT)]
    changed = 0
    for state in {STATE_OF[t.state] for t in gone}:
        ids = [t.id for t in gone if t.state == state.value]
        changed += len(door.set_task_instance_state(
            conn, ids, frm=state, to=TI.REMOVED, actor=ACTOR, now=now).changed)
    for t in gone:
        states[ti_label(t.task_id, t.map_index)] = TI.REMOVED
    return changed


def _due(conn: Connection, e: RunEntry, states: States, now: datetime) -> int:
    """Due retries and reschedules go back to scheduled (same dependencies held before)."""
    due: dict[TaskInstanceState, list[int]] = defaultdict(list)
    for n in e.waiting:
        t, st = e.nodes.rows[n], states[n]
        if st is TI.UP_FOR_RETRY and (t.next_retry_at is None or t.next_retry_at <= now):
            due[st].append(t.id)
            states[n] = TI.SCHEDULED
        elif st is TI.UP_FOR_RESCHEDULE and (
                t.reschedule_date is None or t.reschedule_date <= now):
            due[st].append(t.id)
            states[n] = TI.SCHEDULED
    return sum(len(door.set_task_instance_state(
        conn, ids, frm=st, to=TI.SCHEDULED, actor=ACTOR, now=now).changed)
        for st, ids in due.items())


def _fail_stop(conn: Connection, w: RunWork, nodes: RunNodes, states: States,
               now: datetime) -> int:
    to_fail, to_skip = fail_stop_targets([RunTaskView(t, st) for t, st in states.items()],
                                         teardown_task_ids=nodes.labels(w.view.teardowns))
    by_task = nodes.rows
    changed = 0
    if to_fail:
        pairs = [(by_task[t].id, by_task[t].try_number) for t in to_fail]
        changed += len(door.set_task_instance_state(
            conn, [], fenced=pairs, frm=TI.RUNNING, to=TI.FAILED, actor=ACTOR, now=now,
            message="stopped: another task failed and the DAG has fail_stop").changed)
        for t in to_fail:
            states[t] = TI.FAILED
    groups: dict[TaskInstanceState, list[str]] = defaultdict(list)
    for t in to_skip:
        groups[states[t]].append(t)
    for st, tids in groups.items():
        res = door.set_task_instance_state(
            conn, [by_task[t].id for t in tids], frm=st, to=TI.SKIPPED, actor=ACTOR, now=now,
            message="stopped: another task failed and the DAG has fail_stop")
        changed += len(res.changed)
        for t in tids:
            states[t] = TI.SKIPPED
    return changed


def _task_of(label: str, nodes: RunNodes) -> str:
    """The task of a label (instances created by an expansion in this pass included)."""
    return nodes.task_of.get(label) or label.rsplit("[", 1)[0]
