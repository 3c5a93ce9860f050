"""A read-only view over a serialized DAG (what the scheduler knows; it never imports user code)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from statewright.core.empty_tasks import runs_nothing
from statewright.core.setup_teardown import SetupTeardownGraph
from statewright.core.task_dates import rows_in_run
from statewright.core.trigger_rules import TriggerRule, parse_trigger_rule


@dataclass(frozen=True)
class TaskView:
    task_id: str
    operator: str
    upstream: tuple[str, ...]
    downstream: tuple[str, ...]
    trigger_rule: TriggerRule
    retries: int
    retry_delay: timedelta
    retry_exponential_backoff: bool
    max_retry_delay: timedelta | None
    execution_timeout: float | None
    priority_weight: int
    weight_rule: str
    pool: str
    pool_slots: int
    queue: str
    max_active_tis_per_dag: int | None
    depends_on_past: bool
    raw: Mapping[str, Any]
    is_setup: bool = False
    is_teardown: bool = False
    on_failure_fail_dagrun: bool = False
    expand_input: Mapping[str, Any] | None = None
    """A mapped task's expand input (statewright.core.mapping); ``None`` when unmapped."""
    max_active_tis_per_dagrun: int | None = None
    mapped_task_group: str | None = None
    """The mapped task group the task is mapped by (its expand input is the group's)."""

    @property
    def is_mapped(self) -> bool:
        return self.expand_input is not None


class DagView:
    def __init__(self, serialized: Mapping[str, Any], dag_hash: str = "") -> None:
        self.raw = serialized
        self.dag_hash = dag_hash
        self.dag_id: str = serialized["dag_id"]
        self.fileloc: str | None = serialized.get("fileloc")
        self.fail_stop: bool = bool(serialized.get("fail_stop", False))
        self.max_active_tasks: int = int(serialized.get("max_active_tasks", 16))
        self.max_active_runs: int = int(serialized.get("max_active_runs", 16))
        self.tasks: dict[str, TaskView] = {}
        # Tasks with dates of their own, and the DAG's for the others: runs outside them get
        # no task instance of the task.
        self.dag_window = (_date(serialized.get("start_date")), _date(serialized.get("end_date")))
        self.task_windows: dict[str, tuple[datetime | None, datetime | None]] = {
            t["task_id"]: (_date(t.get("start_date")), _date(t.get("end_date")))
            for t in serialized["tasks"] if t.get("start_date") or t.get("end_date")}
        for t in serialized["tasks"]:
            delay = t.get("max_retry_delay")
            self.tasks[t["task_id"]] = TaskView(
                task_id=t["task_id"],
                operator=t.get("operator", ""),
                upstream=tuple(t.get("upstream", ())),
                downstream=tuple(t.get("downstream", ())),
                trigger_rule=parse_trigger_rule(t.get("trigger_rule", "all_success")),
                retries=int(t.get("retries", 0)),
                retry_delay=timedelta(seconds=float(t.get("retry_delay", 300))),
                retry_exponential_backoff=bool(t.get("retry_exponential_backoff", False)),
                max_retry_delay=None if delay is None else timedelta(seconds=float(delay)),
                execution_timeout=t.get("execution_timeout"),
                priority_weight=int(t.get("priority_weight", 1)),
                weight_rule=str(t.get("weight_rule", "downstream")),
                pool=str(t.get("pool", "default_pool")),
                pool_slots=int(t.get("pool_slots", 1)),
                queue=str(t.get("queue", "default")),
                max_active_tis_per_dag=t.get("max_active_tis_per_dag"),
                depends_on_past=bool(t.get("depends_on_past", False)),
                raw=t,
                # Serialized DAGs written before setup/teardown tasks existed lack these keys.
                is_setup=bool(t.get("is_setup", False)),
                is_teardown=bool(t.get("is_teardown", False)),
                on_failure_fail_dagrun=bool(t.get("on_failure_fail_dagrun", False)),
                expand_input=t.get("expand_input"),
                max_active_tis_per_dagrun=t.get("max_active_tis_per_dagrun"),
                mapped_task_group=t.get("mapped_task_group"),
            )
        self.order: list[str] = [t["task_id"] for t in serialized["tasks"]]
        self.depends_on_past: bool = any(t.depends_on_past for t in self.tasks.values())
        """Some task waits for its instance in the previous run: a run's change may give the
        next run work."""
        self.leaves: frozenset[str] = frozenset(
            tid for tid, t in self.tasks.items() if not t.downstream
        )
        """The tasks without a downstream task."""
        self.setups: frozenset[str] = frozenset(t for t, v in self.tasks.items() if v.is_setup)
        self.teardowns: frozenset[str] = frozenset(
            t for t, v in self.tasks.items() if v.is_teardown
        )
        self.graph = SetupTeardownGraph(
            upstream={tid: t.upstream for tid, t in self.tasks.items()},
            downstream={tid: t.downstream for tid, t in self.tasks.items()},
            setups=self.setups,
            teardowns=self.teardowns,
            fail_dagrun_teardowns=frozenset(
                t for t in self.teardowns if self.tasks[t].on_failure_fail_dagrun
            ),
        )
        self.run_state_leaves: frozenset[str] = (
            self.graph.run_state_leaves() if self.teardowns else self.leaves
        )
        """The tasks the run's final state is decided from (Airflow's ``_tis_for_dagrun_state``):
        the leaves, with teardowns left out unless ``on_failure_fail_dagrun``."""
        self.indirect_setups: dict[str, frozenset[str]] = {}
        """Task → the setups it waits for that are not its direct upstreams (setup constraint)."""
        if self.setups:
            for tid in self.order:
                indirect = self.graph.indirect_setups(tid)
                if indirect:
                    self.indirect_setups[tid] = indirect
        self._weights: dict[str, int] | None = None
        self.mapped: frozenset[str] = frozenset(t for t, v in self.tasks.items() if v.is_mapped)
        self.empty: frozenset[str] = frozenset(
            t for t, v in self.tasks.items() if runs_nothing(v.raw))
        """Tasks whose instances the scheduler sets to success itself (EmptyOperator)."""

    def effective_priority(self, task_id: str) -> int:
        """Airflow's weight rules: downstream (default), upstream, absolute."""
        if self._weights is None:
            self._weights = {tid: db_safe_priority(w)
                             for tid, w in self._compute_weights().items()}
        return self._weights[task_id]

    def _compute_weights(self) -> dict[str, int]:
        def closure(tid: str, attr: str) -> set[str]:
            seen: set[str] = set()
            stack = list(getattr(self.tasks[tid], attr))
            while stack:
                n = stack.pop()
                if n not in seen:
                    seen.add(n)
                    stack.extend(getattr(self.tasks[n], attr))
            return seen

        out: dict[str, int] = {}
        for tid, t in self.tasks.items():
            if t.weight_rule == "absolute":
                out[tid] = t.priority_weight
            elif "." in t.weight_rule:  # a plugin's PriorityWeightStrategy
                out[tid] = _strategy_weight(t)
            elif t.weight_rule == "upstream":
                out[tid] = t.priority_weight + sum(
                    self.tasks[u].priority_weight for u in closure(tid, "upstream"))
            else:
                out[tid] = t.priority_weight + sum(
                    self.tasks[d].priority_weight for d in closure(tid, "downstream"))
        return out

    def rows_in_run(self, rows: Sequence[Mapping[str, Any]], logical_date: datetime | None,
                    run_type: str) -> list[Mapping[str, Any]]:
        """The new task instance ``rows`` a run at ``logical_date`` keeps (task dates)."""
        return rows_in_run(list(rows), self.task_windows, logical_date, run_type,
                           self.dag_window)

    def task_rows(self) -> list[dict[str, Any]]:
        """Columns of new task instances for this DAG."""
        return [
            {
                "task_id": tid,
                "max_tries": t.retries,
                "priority_weight": self.effective_priority(tid),
                "pool": t.pool,
                "pool_slots": t.pool_slots,
                "queue": t.queue,
                "operator": t.operator,
            }
            for tid, t in self.tasks.items()
        ]


class DagViewCache:
    """Parsed serialized DAGs keyed by (dag_id, hash); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._views: dict[str, DagView] = {}

    def get(self, dag_id: str, dag_hash: str, serialized_loader: Any) -> DagView:
        with self._lock:
            view = self._views.get(dag_id)
            if view is not None and view.dag_hash == dag_hash:
                return view
        serialized = serialized_loader()
        view = DagView(serialized, dag_hash)
        with self._lock:
            self._views[dag_id] = view
        return view


_PRIORITY_MIN, _PRIORITY_MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True)
class _NewTaskInstance:
    """What a priority-weight strategy sees of a task instance being created."""

    task_id: str
    priority_weight: int
    try_number: int = 0
    map_index: int = -1


def _date(value: str | None) -> datetime | None:
    return None if not value else datetime.fromisoformat(value)


def _strategy_weight(t: TaskView) -> int:
    """The weight a plugin's strategy gives a new task instance; the task's own
    ``priority_weight`` when no plugin registers the strategy or it raises (logged)."""
    from statewright.sdk.plugins import priority_weight_strategy

    cls = priority_weight_strategy(t.weight_rule)
    try:
        if cls is None:
            raise LookupError(f"no plugin registers the strategy {t.weight_rule!r}")
        return int(cls().get_weight(_NewTaskInstance(t.task_id, t.priority_weight)))
    except Exception:
        logging.getLogger(__name__).exception(
            "priority weight of task %s: strategy %s failed; using priority_weight %s",
            t.task_id, t.weight_rule, t.priority_weight)
        return t.priority_weight


def db_safe_priority(weight: int) -> int:
    """A summed weight clamped to the 32-bit ``priority_weight`` column (Airflow's
    ``db_safe_priority``): a long chain of heavy tasks never makes the run's insert fail."""
    return max(_PRIORITY_MIN, min(_PRIORITY_MAX, weight))
