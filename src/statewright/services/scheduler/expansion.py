"""Mapped tasks in the scheduler: task instances keyed by map index, and expansion.

A run's task instances are keyed ``task`` (unmapped, map index -1) or ``task[i]`` (map index
``i``) — ``statewright.core.mapping.ti_label``. Trigger rules see every instance of an upstream
task: each instance of a task depends on all instances of its upstream tasks.

A mapped task has one instance of map index -1 until its dependencies are met; then it is
expanded (``decide_expansion``) from the outputs of the upstreams it maps over, in the same
transaction: ``n`` instances ``scheduled``, or the -1 instance ``skipped`` (nothing to map over)
or ``failed`` (not a list or dict; too long).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain
from operator import attrgetter
from typing import Any

from sqlalchemy import Connection

from statewright.core.mapping import (
    UNMAPPED,
    ExpansionOutcome,
    decide_expansion,
    expand_input_upstreams,
    ti_label,
)
from statewright.core.states import TI, TI_UNFINISHED, TaskInstanceState
from statewright.core.transitions import Actor
from statewright.core.trigger_rules import DepDecision, UpstreamSummary, evaluate_dependencies
from statewright.db import transition as door
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import xcoms as xcom_repo
from statewright.sdk import serde
from statewright.services.dag_view import DagView

log = logging.getLogger("statewright.scheduler")
_BY_TASK_AND_INDEX = attrgetter("task_id", "map_index")


@dataclass
class RunNodes:
    """A run's task instances keyed by label, with each task's labels in map-index order."""

    view: DagView
    rows: dict[str, Any] = field(default_factory=dict)
    task_of: dict[str, str] = field(default_factory=dict)
    of_task: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def build(cls, view: DagView, tis: list[Any]) -> RunNodes:
        nodes = cls(view)
        rows, task_of, of_task = nodes.rows, nodes.task_of, nodes.of_task
        for t in sorted(tis, key=_BY_TASK_AND_INDEX):
            task_id, index = t.task_id, t.map_index
            label = task_id if index < 0 else ti_label(task_id, index)
            rows[label] = t
            task_of[label] = task_id
            of_task[task_id].append(label)
        return nodes

    def labels(self, task_ids: Any) -> list[str]:
        return [n for tid in task_ids for n in self.of_task.get(tid, ())]

    def order(self) -> list[str]:
        """Labels in the DAG's topological order of tasks, then by map index."""
        return self.labels(self.view.order)

    def upstream(self, states: Mapping[str, TaskInstanceState]) -> dict[str, tuple[str, ...]]:
        """Each instance's upstream instances: every instance of its upstream tasks, but for
        the removed instances of a mapped task (surplus map indexes, which Airflow leaves out
        of the counts too). Inside a mapped task group, instance ``i`` depends only on instance
        ``i`` of an upstream in the same group, and the unexpanded instance only on that
        upstream's unexpanded one (Airflow's relevant upstream map indexes)."""
        tasks = self.view.tasks
        if not self.view.mapped and all(n == tid for n, tid in self.task_of.items()):
            # One instance per task, labelled by its task id: the DAG's own upstreams (a task
            # without an instance in this run is no one's upstream: the planning leaves out
            # labels without a state).
            return {n: tasks[n].upstream if n in tasks else () for n in self.task_of}

        def counted(n: str) -> bool:
            return self.rows[n].map_index < 0 or states.get(n) is not TI.REMOVED

        # Each task's counted instances; an unmapped task's one instance always counts.
        kept = {tid: ns if len(ns) == 1 and ns[0] == tid else tuple(n for n in ns if counted(n))
                for tid, ns in self.of_task.items()}
        per_task = {tid: tuple(chain.from_iterable(kept.get(u, ()) for u in t.upstream))
                    for tid, t in self.view.tasks.items()}
        out = {n: per_task.get(tid, ()) for n, tid in self.task_of.items()}
        for tid, task in self.view.tasks.items():
            if task.mapped_task_group is None:
                continue
            for n in self.of_task.get(tid, ()):
                out[n] = self._in_group_upstream(n, task.upstream, task.mapped_task_group,
                                                 counted)
        return out

    def _in_group_upstream(self, label: str, upstream: Any, group: str, counted: Any
                           ) -> tuple[str, ...]:
        index = self.rows[label].map_index
        found: list[str] = []
        for up in upstream:
            up_task = self.view.tasks.get(up)
            if up_task is not None and up_task.mapped_task_group == group:
                labels = [m for m in {ti_label(up, index), ti_label(up, UNMAPPED)}
                          if m in self.rows]
            else:
                labels = self.of_task.get(up, [])
            found.extend(m for m in labels if counted(m))
        return tuple(found)

    def unexpanded(self, label: str) -> bool:
        row = self.rows[label]
        return row.map_index == UNMAPPED and row.task_id in self.view.mapped


def upstream_values(conn: Connection, run_pk: int, view: DagView, task_ids: list[str]
                    ) -> dict[str, Any]:
    """Outputs of upstream tasks as a mapped task sees them: an unmapped task's return value,
    a mapped task's list of its instances' values in map-index order."""
    stored = xcom_repo.get_indexed_return_values(conn, [(run_pk, t) for t in task_ids])
    out: dict[str, Any] = {}
    for tid in task_ids:
        by_index = stored.get((run_pk, tid))
        # Values as serialized (sdk.serde): counted by their shape, never rebuilt here.
        if tid in view.mapped:
            out[tid] = [serde.shape(v) for m, v in sorted((by_index or {}).items()) if m >= 0]
        elif by_index is not None and UNMAPPED in by_index:
            out[tid] = serde.shape(by_index[UNMAPPED])
    return out


def expand(conn: Connection, run_pk: int, nodes: RunNodes, labels: list[str], *,
           states: MutableMapping[str, TaskInstanceState], max_map_length: int, actor: Actor,
           now: datetime) -> int:
    """Expand the mapped tasks ``labels`` (unexpanded, dependencies met); update ``states``."""
    changed = 0
    for label in labels:
        row = nodes.rows[label]
        task = nodes.view.tasks[row.task_id]
        assert task.expand_input is not None
        values = upstream_values(conn, run_pk, nodes.view,
                                 expand_input_upstreams(task.expand_input))
        decision = decide_expansion(row.task_id, task.expand_input, values,
                                    max_map_length=max_map_length)
        if decision.outcome is ExpansionOutcome.EXPAND and in_group_upstream(nodes.view,
                                                                           row.task_id):
            changed += _expand_depth_first(conn, row, decision.length, states=states,
                                           actor=actor, now=now)
            continue
        if decision.outcome is ExpansionOutcome.EXPAND:
            created = door.expand_mapped_task(conn, row.id, length=decision.length,
                                              actor=actor, now=now)
            if created:
                states.pop(label, None)
                for i in range(decision.length):
                    states[ti_label(row.task_id, i)] = TI.SCHEDULED
            changed += created
            continue
        target = TI.SKIPPED if decision.outcome is ExpansionOutcome.SKIP else TI.FAILED
        res = door.set_task_instance_state(conn, row.id, frm=TI.NONE, to=target, actor=actor,
                                           now=now, message=decision.message)
        if res.changed:
            states[label] = target
            changed += 1
            if target is TI.FAILED:
                log.warning("%s", decision.message)
    return changed


def revise(conn: Connection, run_pk: int, nodes: RunNodes,
           planned: dict[str, TaskInstanceState], *, states: MutableMapping[str, TaskInstanceState],
           max_map_length: int, actor: Actor, now: datetime) -> int:
    """A mapped task cleared as a whole (every instance back in ``none``, dependencies met
    again) is counted again, as Airflow's ``_revise_map_indexes_if_mapped``: more items add
    instances (``scheduled``), fewer set the surplus ``removed``; none skip it, and a value
    that cannot be mapped over fails it. Updates ``planned`` and ``states``."""
    changed = 0
    for task_id in nodes.view.mapped:
        labels = nodes.of_task.get(task_id, [])
        if not labels or nodes.unexpanded(labels[0]) or any(
                planned.get(n) is not TI.SCHEDULED for n in labels):
            continue
        task = nodes.view.tasks[task_id]
        assert task.expand_input is not None
        values = upstream_values(conn, run_pk, nodes.view,
                                 expand_input_upstreams(task.expand_input))
        decision = decide_expansion(task_id, task.expand_input, values,
                                    max_map_length=max_map_length)
        have = len(labels)
        if decision.outcome is ExpansionOutcome.EXPAND:
            length = decision.length
            if length > have:
                changed += door.add_map_indexes(
                    conn, nodes.rows[labels[0]].id, range(have, length), actor=actor, now=now,
                    message=f"expanded again into {length} task instances")
                states.update({ti_label(task_id, i): TI.SCHEDULED for i in range(have, length)})
            surplus = [n for n in labels if nodes.rows[n].map_index >= length]
            target, message = TI.REMOVED, f"mapped again over {length} items: this map index " \
                "is beyond them"
        else:
            surplus = labels
            target = TI.SKIPPED if decision.outcome is ExpansionOutcome.SKIP else TI.FAILED
            message = decision.message or ""
        if surplus:
            res = door.set_task_instance_state(
                conn, [nodes.rows[n].id for n in surplus], frm=TI.NONE, to=target, actor=actor,
                now=now, message=message)
            changed += len(res.changed)
            for n in surplus:
                planned.pop(n, None)
                states[n] = target
    return changed


def in_group_upstream(view: DagView, task_id: str) -> list[str]:
    """The upstream tasks of ``task_id`` in the same mapped task group."""
    group = view.tasks[task_id].mapped_task_group
    if group is None:
        return []
    return [u for u in view.tasks[task_id].upstream
            if u in view.tasks and view.tasks[u].mapped_task_group == group]


def waiting_in_group(nodes: RunNodes, labels: list[str],
                     states: Mapping[str, TaskInstanceState]) -> list[str]:
    """Unexpanded tasks of a mapped task group (of ``labels``, dependencies met) that wait
    until instance 0 of their upstream in the group has finished: expanding makes their own
    instance 0 ``scheduled`` (``settle_in_group`` then decides it by that upstream instance)."""
    return [n for n in labels if any(
        states.get(ti_label(u, 0)) in TI_UNFINISHED
        for u in in_group_upstream(nodes.view, nodes.task_of[n]))]


def _expand_depth_first(conn: Connection, row: Any, length: int, *,
                        states: MutableMapping[str, TaskInstanceState], actor: Actor,
                        now: datetime) -> int:
    """Expand a task of a mapped task group that has an upstream in the group: the row becomes
    map index 0 (``scheduled``); map indexes 1 .. length-1 are created in ``none``, each then
    scheduled once its own upstream instance allows (Airflow's depth-first execution)."""
    res = door.set_task_instance_state(
        conn, row.id, frm=TI.NONE, to=TI.SCHEDULED, actor=actor, now=now,
        message=f"expanded into {length} task instances", values={"map_index": 0})
    if not res.changed:
        return 0
    states.pop(ti_label(row.task_id, UNMAPPED), None)
    states[ti_label(row.task_id, 0)] = TI.SCHEDULED
    full = ti_repo.get(conn, row.id)._mapping
    same = {k: full[k] for k in ("task_id", "max_tries", "priority_weight", "pool", "pool_slots",
                                 "queue", "operator")}
    door.create_task_instances(
        conn, dag_run_id=full["dag_run_id"], dag_id=full["dag_id"], run_id=full["run_id"],
        rows=[{**same, "map_index": i} for i in range(1, length)], actor=actor, now=now)
    states.update({ti_label(row.task_id, i): TI.NONE for i in range(1, length)})
    return length


def settle_in_group(conn: Connection, nodes: RunNodes, labels: list[str], *,
                    states: MutableMapping[str, TaskInstanceState], actor: Actor,
                    now: datetime) -> int:
    """Just expanded tasks (``labels``) of a mapped task group with an upstream in the group:
    instance 0, ``scheduled`` by the expansion, is skipped or set upstream_failed at once when
    its trigger rule fails over instance 0 of that upstream (and its upstream outside)."""
    changed = 0
    view = nodes.view
    for label in labels:
        task_id = nodes.task_of[label]
        inside = in_group_upstream(view, task_id)
        first = ti_label(task_id, 0)
        if not inside or states.get(first) is not TI.SCHEDULED:
            continue
        task = view.tasks[task_id]
        ups = [*nodes.labels(u for u in task.upstream if u not in inside),
               *(ti_label(u, 0) for u in inside)]
        seen = [states[u] for u in ups if u in states]
        setups = [states[u] for u in ups
                  if u in states and nodes.task_of.get(u) in view.setups]
        decision = evaluate_dependencies(task.trigger_rule,
                                         UpstreamSummary.from_states(seen, setups))
        if decision not in (DepDecision.SKIP, DepDecision.UPSTREAM_FAILED):
            continue
        target = TI.SKIPPED if decision is DepDecision.SKIP else TI.UPSTREAM_FAILED
        res = door.set_task_instance_state(conn, nodes.rows[label].id, frm=TI.SCHEDULED,
                                           to=target, actor=actor, now=now)
        if res.changed:
            states[first] = target
            changed += 1
    return changed


def label_map(labels: Mapping[str, Any], nodes: RunNodes) -> dict[str, list[str]]:
    """A mapping over task ids, translated to labels (``indirect_setups``)."""
    return {n: nodes.labels(labels[tid]) for tid in labels for n in nodes.of_task.get(tid, ())}
