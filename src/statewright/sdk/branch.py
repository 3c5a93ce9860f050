"""Skipping downstream tasks from a running task: SkipMixin and BaseBranchOperator.

A task cannot change other task instances itself (it holds no database session): it names them
on its ``ti``, and the outcome of a successful try carries the list to the worker.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from statewright.sdk.baseoperator import BaseOperator


class BranchError(Exception):
    """A branch callable returned something that is not a choice among the next tasks."""


class SkipMixin:
    """Helpers for operators that decide which downstream tasks are skipped."""

    def skip(self, ti: Any, tasks: Iterable[BaseOperator | str]) -> None:
        """Mark ``tasks`` (tasks or task ids of this DAG) to be skipped in this run."""
        ti.skip_downstream(t if isinstance(t, str) else t.task_id for t in tasks)

    def skip_all_except(self, ti: Any, branch_task_ids: str | Iterable[str] | None) -> None:
        """Skip every task directly downstream of ``ti.task`` except the chosen ones.

        Airflow's rule for a branch that leads straight to a join: a direct downstream task that
        is also downstream of a chosen task is kept (``branch >> [a, join]; a >> join``).
        """
        task: BaseOperator = ti.task
        chosen = _as_id_set(branch_task_ids, task.task_id)
        dag = task._require_dag()
        unknown = sorted(chosen - set(dag.task_dict))
        if unknown:
            raise BranchError(
                f"branch task {task.task_id!r} chose {unknown}, which are not tasks of DAG "
                f"{dag.dag_id!r}; choose among the tasks directly downstream of it: "
                f"{sorted(task.downstream_task_ids)}"
            )
        # Like Airflow, a chosen task that is in the DAG but not directly downstream is accepted:
        # it only keeps its own descendants among the direct downstream tasks from being skipped.
        followed = set(chosen)
        for task_id in chosen:
            followed |= dag.task_dict[task_id].get_flat_relative_ids(upstream=False)
        self.skip(ti, sorted(task.downstream_task_ids - followed))


class BaseBranchOperator(BaseOperator, SkipMixin):
    """Subclass and implement ``choose_branch(context)``: return a task id, a list, or None."""

    def choose_branch(self, context: Any) -> str | Iterable[str] | None:
        raise NotImplementedError(
            f"{type(self).__name__} must implement choose_branch(context) and return the task "
            "id(s) to follow")

    def execute(self, context: Any) -> Any:
        return self.do_branch(context, self.choose_branch(context))

    def do_branch(self, context: Any, branches: str | Iterable[str] | None) -> Any:
        if isinstance(branches, (set, frozenset)):
            branches = sorted(branches)
        elif (
            branches is not None
            and not isinstance(branches, str)
            and isinstance(branches, Iterable)
        ):
            branches = list(branches)
        self.skip_all_except(context["ti"], branches)
        return branches


def _as_id_set(value: str | Iterable[str] | None, task_id: str) -> set[str]:
    if value is None:
        return set()
    if isinstance(value, str):
        return {value}
    if isinstance(value, Iterable):
        items = list(value)
        bad = [v for v in items if not isinstance(v, str)]
        if bad:
            raise BranchError(
                f"branch task {task_id!r} returned non-string task ids {bad!r}; return a task "
                "id, a list of task ids, or None"
            )
        return set(items)
    raise BranchError(
        f"branch task {task_id!r} returned {type(value).__name__} {value!r}; return a task id, "
        "a list of task ids, or None"
    )
