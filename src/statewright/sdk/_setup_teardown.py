"""``with setup_task >> teardown_task:``: the work tasks created inside run between the two.

Airflow's setup/teardown context manager (``SetupTeardownContext``). Entering a setup or teardown
task opens a scope; every task created inside it is recorded. On leaving:

- the work tasks recorded (neither setup nor teardown) without an upstream task get the scope's
  setups upstream (when none is without one, the first created does);
- those without a downstream task get the scope's teardowns downstream (when none, the last
  created does);
- a scope opened inside another one chains to it: outer setups >> inner setups, inner
  teardowns >> outer teardowns.

The scope's setups and teardowns: entering a teardown, its setups are the setup tasks among its
direct upstreams (searched further through the graph, as Airflow does, when there is none);
entering a setup, its teardowns are found the same way downstream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from statewright.core.errors import DagDefinitionError
from statewright.sdk import _dag_context

if TYPE_CHECKING:
    from statewright.sdk.baseoperator import BaseOperator


class SetupTeardownScope:
    """One open ``with`` block: its setup and teardown tasks, and the tasks created inside."""

    def __init__(self, setups: list[BaseOperator], teardowns: list[BaseOperator]) -> None:
        self.setups = setups
        self.teardowns = teardowns
        self.tasks: list[BaseOperator] = []

    def add_task(self, task: object) -> None:
        """Put a task created before the block in it (Airflow's ``context.add_task``)."""
        from statewright.sdk.xcom_arg import XComArg

        operator = task.operator if isinstance(task, XComArg) else task
        if operator not in self.tasks:
            self.tasks.append(operator)  # type: ignore[arg-type]

    def close(self) -> None:
        work = [t for t in self.tasks if not t.is_setup and not t.is_teardown]
        if not work:
            return
        if self.setups:
            roots = [t for t in work if not t.upstream_task_ids] or [work[0]]
            for setup_task in self.setups:
                for root in roots:
                    if root is not setup_task:
                        setup_task.set_downstream(root)
        if self.teardowns:
            leaves = [t for t in work if not t.downstream_task_ids] or [work[-1]]
            for teardown_task in self.teardowns:
                for leaf in leaves:
                    if leaf is not teardown_task:
                        leaf.set_downstream(teardown_task)


def _neighbours_until(start: Sequence[BaseOperator], origin: BaseOperator,
                      wanted: str) -> list[BaseOperator]:
    """Airflow's ``_get_setups`` / ``_get_teardowns``: the setup (or teardown) tasks among
    ``start``; when there is none, among their neighbours, and so on."""
    seen: set[str] = {origin.task_id}
    frontier = list(start)
    while frontier:
        found = [t for t in frontier if getattr(t, wanted)]
        if found:
            return found
        seen.update(t.task_id for t in frontier)
        following: list[BaseOperator] = []
        for task in frontier:
            for other in (*task.downstream_list, *task.upstream_list):
                if other.task_id not in seen and other not in following:
                    following.append(other)
        frontier = following
    return []


def open_scope(task: BaseOperator) -> SetupTeardownScope:
    if task.is_teardown:
        setups = _neighbours_until(task.upstream_list, task, "is_setup")
        scope = SetupTeardownScope(setups=setups, teardowns=[task])
    elif task.is_setup:
        teardowns = _neighbours_until(task.downstream_list, task, "is_teardown")
        scope = SetupTeardownScope(setups=[task], teardowns=teardowns)
    else:
        raise DagDefinitionError(
            f"task {task.task_id!r}: only setup/teardown tasks can be used as context managers "
            "(`with setup_task >> teardown_task:`); mark it with as_setup() or as_teardown()."
        )
    _dag_context.setup_teardown_scopes().append(scope)
    return scope


def close_scope(failed: bool) -> None:
    scopes = _dag_context.setup_teardown_scopes()
    if not scopes:
        return
    scope: SetupTeardownScope = scopes.pop()
    if failed:
        return
    scope.close()
    if scopes:
        outer: SetupTeardownScope = scopes[-1]
        for outer_setup in outer.setups:
            for inner_setup in scope.setups:
                if inner_setup is not outer_setup:
                    outer_setup.set_downstream(inner_setup)
        for inner_teardown in scope.teardowns:
            for outer_teardown in outer.teardowns:
                if inner_teardown is not outer_teardown:
                    inner_teardown.set_downstream(outer_teardown)


def record(task: BaseOperator) -> None:
    """Called for every task created: it belongs to the innermost open block, if any."""
    scopes = _dag_context.setup_teardown_scopes()
    if scopes:
        scopes[-1].add_task(task)
