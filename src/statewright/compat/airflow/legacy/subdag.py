"""Airflow 2's ``SubDagOperator``, as a task group of the sub-DAG's tasks.

``SubDagOperator(task_id="section", subdag=DAG("parent.section", ...))`` gives a task group
``section`` in the parent DAG holding the sub-DAG's tasks (``section.<task id>``, their
dependencies kept) and one more task, ``section.subdag_done``, that stands for the operator's
own outcome: it follows every task of the sub-DAG with the ``none_failed`` rule, so, as in
Airflow 2, what comes after the operator runs when the sub-DAG ended without a failure (skipped
tasks included) and is ``upstream_failed`` when a task of it failed. The sub-DAG's tasks run in
the parent's run; the sub-DAG itself is not loaded as a DAG of its own.
"""

from __future__ import annotations

from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.sdk import _dag_context
from statewright.sdk.dag import DAG
from statewright.sdk.operators import EmptyOperator
from statewright.sdk.taskgroup import TaskGroup

__all__ = ["SubDagOperator"]

DONE = "subdag_done"
"""The label of the task that stands for the operator's own outcome."""


class SubDagOperator:
    """Builds the task group; ``SubDagOperator(...)`` returns it (``a >> section >> b`` works)."""

    ui_color = "#555"

    def __new__(cls, *, task_id: str, subdag: DAG, dag: DAG | None = None,
                task_group: TaskGroup | None = None, trigger_rule: Any = None,
                **_ignored: Any) -> Any:
        if not isinstance(subdag, DAG):
            raise DagDefinitionError(
                f"SubDagOperator {task_id!r}: subdag= must be a DAG, got {type(subdag).__name__}.")
        parent = dag or (task_group.dag if task_group else None) or _dag_context.current_dag()
        if parent is None:
            raise DagDefinitionError(
                f"SubDagOperator {task_id!r} belongs to no DAG: create it inside `with DAG(...)` "
                "or pass dag=...")
        group = TaskGroup(task_id, parent_group=task_group, dag=parent,
                          tooltip=f"sub-DAG {subdag.dag_id}")
        _transplant(subdag, parent, group, trigger_rule)
        done = EmptyOperator(task_id=DONE, dag=parent, task_group=group,
                             trigger_rule="none_failed")
        for task in list(group.iter_tasks()):
            if task is not done and not task.downstream_task_ids:
                task >> done
        _dag_context.forget_dag(subdag)
        return group


def _transplant(subdag: DAG, parent: DAG, group: TaskGroup, trigger_rule: Any) -> None:
    """Move the sub-DAG's tasks into ``group`` of ``parent``, ids prefixed, edges kept."""
    tasks = list(subdag.task_dict.values())
    new_ids = {task.task_id: group.child_id(task.task_id) for task in tasks}
    subdag.task_dict.clear()
    subdag.task_group.children.clear()
    for task in tasks:
        label = task.task_id
        task.upstream_task_ids = {new_ids[i] for i in task.upstream_task_ids}
        task.downstream_task_ids = {new_ids[i] for i in task.downstream_task_ids}
        if trigger_rule is not None and not task.upstream_task_ids:
            task.trigger_rule = trigger_rule
        task.task_id = new_ids[label]
        task.__dict__.pop("_dag", None)
        task.task_group = group
        group.add(task, label)
        parent.add_task(task)
