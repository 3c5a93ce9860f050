"""Setup and teardown tasks: the questions about the graph that Airflow 2.7+ asks of them.

A *setup* task prepares a resource, a *teardown* task releases it; the work tasks between them are
in their *scope*. Airflow gives a teardown the trigger rule ``all_done_setup_success``
(:mod:`statewright.core.trigger_rules`); everything else follows from the graph, and is answered
here, on task ids only, for the scheduler (which never imports user code), for clearing and for
the authoring SDK alike:

- :meth:`SetupTeardownGraph.relevant_setups` / :meth:`~SetupTeardownGraph.indirect_setups`: the
  setups a work task waits for even when they are not its direct upstreams (Airflow's
  ``get_upstreams_only_setups``, used by ``TriggerRuleDep._evaluate_setup_constraint``);
- :meth:`SetupTeardownGraph.run_state_leaves`: the tasks a run's final state is decided from,
  teardowns left out unless ``on_failure_fail_dagrun`` (``DagRun._tis_for_dagrun_state``);
- :meth:`SetupTeardownGraph.clear_selection`: the tasks that clearing some tasks also clears, their
  setups and teardowns (``DAG.partial_subset``, which Airflow's ``tasks clear`` uses).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SetupTeardownGraph:
    """A DAG's edges and which of its tasks are setups and teardowns.

    ``upstream`` and ``downstream`` map each task id to its direct upstream / downstream task ids;
    ``fail_dagrun_teardowns`` are the teardowns with ``on_failure_fail_dagrun=True``.
    """

    upstream: Mapping[str, Collection[str]]
    downstream: Mapping[str, Collection[str]]
    setups: frozenset[str] = frozenset()
    teardowns: frozenset[str] = frozenset()
    fail_dagrun_teardowns: frozenset[str] = frozenset()
    _flat: dict[tuple[str, bool], frozenset[str]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def task_ids(self) -> list[str]:
        return list(dict.fromkeys([*self.downstream, *self.upstream]))

    def flat_relatives(self, task_id: str, *, upstream: bool) -> frozenset[str]:
        """Every task reachable from ``task_id`` going up (or down), itself excluded."""
        key = (task_id, upstream)
        cached = self._flat.get(key)
        if cached is not None:
            return cached
        edges = self.upstream if upstream else self.downstream
        seen: set[str] = set()
        stack = list(edges.get(task_id, ()))
        while stack:
            other = stack.pop()
            if other in seen:
                continue
            seen.add(other)
            stack.extend(edges.get(other, ()))
        seen.discard(task_id)
        result = frozenset(seen)
        self._flat[key] = result
        return result

    def _teardowns_of(self, setup_id: str) -> list[str]:
        return [t for t in self.downstream.get(setup_id, ()) if t in self.teardowns]

    def upstreams_follow_setups(self, task_id: str) -> set[str]:
        """Airflow's ``get_upstreams_follow_setups``: every upstream task and, for each upstream
        setup, its teardowns (its direct downstream teardowns)."""
        out: set[str] = set()
        for other in self.flat_relatives(task_id, upstream=True):
            out.add(other)
            if other in self.setups:
                out.update(t for t in self._teardowns_of(other) if t != task_id)
        return out

    def upstreams_only_setups_and_teardowns(self, task_id: str) -> set[str]:
        """Airflow's ``get_upstreams_only_setups_and_teardowns``: the *relevant* upstream setups
        of ``task_id`` and their teardowns.

        An upstream setup is relevant when it has no teardown at all, or when one of its teardowns
        is downstream of ``task_id`` (so ``task_id`` is in the setup's scope).
        """
        downstream_teardowns = {
            t for t in self.flat_relatives(task_id, upstream=False) if t in self.teardowns
        }
        out: set[str] = set()
        for other in self.flat_relatives(task_id, upstream=True):
            if other not in self.setups:
                continue
            teardowns = self._teardowns_of(other)
            if not teardowns or downstream_teardowns.intersection(teardowns):
                out.add(other)
                out.update(t for t in teardowns if t != task_id)
        return out

    def relevant_setups(self, task_id: str) -> set[str]:
        """Airflow's ``get_upstreams_only_setups``: the relevant upstream setups of ``task_id``."""
        return {t for t in self.upstreams_only_setups_and_teardowns(task_id) if t in self.setups}

    def indirect_setups(self, task_id: str) -> frozenset[str]:
        """The relevant setups of ``task_id`` that are not its direct upstreams: the ones the
        setup constraint waits for. Always empty for a teardown (a teardown has no indirect
        setups in Airflow's sense; its own rule looks at its direct upstream setups)."""
        if task_id in self.teardowns or not self.setups:
            return frozenset()
        direct = set(self.upstream.get(task_id, ()))
        return frozenset(s for s in self.relevant_setups(task_id) if s not in direct)

    def _ignorable(self, task_id: str) -> bool:
        """A teardown whose failure does not fail the run."""
        return task_id in self.teardowns and task_id not in self.fail_dagrun_teardowns

    def run_state_leaves(self) -> frozenset[str]:
        """Airflow's ``_tis_for_dagrun_state``: the tasks a run's final state is decided from.

        A task is an *effective leaf* when every task directly downstream of it is an ignorable
        teardown (one without ``on_failure_fail_dagrun``) and it is not one itself. So a work
        task followed only by its teardown counts, and the teardown does not. When no task
        qualifies (a DAG of teardowns only), the plain leaves are used.
        """
        leaves = frozenset(
            t
            for t in self.task_ids
            if all(self._ignorable(d) for d in self.downstream.get(t, ()))
            and not self._ignorable(t)
        )
        if leaves:
            return leaves
        return frozenset(t for t in self.task_ids if not self.downstream.get(t))

    def clear_selection(
        self,
        matched: Iterable[str],
        *,
        include_upstream: bool,
        include_downstream: bool,
    ) -> set[str]:
        """The tasks cleared when ``matched`` are (Airflow's ``DAG.partial_subset``).

        Besides ``matched``:

        - ``include_downstream``: every task below each matched task and, for each of those that
          is neither a setup nor a teardown (and was not matched itself), its relevant setups and
          their teardowns;
        - ``include_upstream``: every task above each matched task, with the teardowns of every
          upstream setup; without it, a matched work task still brings its relevant setups and
          their teardowns;
        - a matched setup brings its teardowns (when ``include_downstream`` does not already).
        """
        chosen = list(dict.fromkeys(matched))
        matched_set = set(chosen)
        out: set[str] = set(matched_set)
        for task_id in chosen:
            is_work = task_id not in self.setups and task_id not in self.teardowns
            if include_downstream:
                for rel in self.flat_relatives(task_id, upstream=False):
                    out.add(rel)
                    if (
                        rel not in matched_set
                        and rel not in self.setups
                        and rel not in self.teardowns
                    ):
                        out |= self.upstreams_only_setups_and_teardowns(rel)
            if include_upstream:
                out |= self.upstreams_follow_setups(task_id)
            elif is_work:
                out |= self.upstreams_only_setups_and_teardowns(task_id)
            if task_id in self.setups and not include_downstream:
                out.update(self._teardowns_of(task_id))
        return out
