"""The ``>>`` / ``<<`` vocabulary shared by operators and XComArgs, and ``chain``."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from statewright.core.errors import DagDefinitionError

if TYPE_CHECKING:
    from statewright.sdk.baseoperator import BaseOperator
    from statewright.sdk.dag import DAG


class DependencyMixin:
    """Something that can stand on either side of ``>>``: a task, or a task's output."""

    @property
    def roots(self) -> list[BaseOperator]:
        raise NotImplementedError(f"{type(self).__name__} must define roots")

    @property
    def leaves(self) -> list[BaseOperator]:
        raise NotImplementedError(f"{type(self).__name__} must define leaves")

    def set_upstream(self, other: DependencyMixin | Sequence[DependencyMixin]) -> None:
        """Make ``other`` run before this."""
        _tell_relatives(self, other, upstream=False)
        for task in self.roots:
            task._add_relatives(other, upstream=True)

    def set_downstream(self, other: DependencyMixin | Sequence[DependencyMixin]) -> None:
        """Make ``other`` run after this."""
        _tell_relatives(self, other, upstream=True)
        for task in self.leaves:
            task._add_relatives(other, upstream=False)

    def update_relative(self, other: DependencyMixin, *, upstream: bool) -> None:
        """Told that ``other`` was set upstream (or downstream) of this; an edge label listens."""

    def __rshift__(self, other: Any) -> Any:
        """``self >> other``: other runs after self; returns other so chains read left to right."""
        self.set_downstream(other)
        return other

    def __lshift__(self, other: Any) -> Any:
        """``self << other``: other runs before self."""
        self.set_upstream(other)
        return other

    def __rrshift__(self, other: Any) -> Any:
        """``[a, b] >> self``."""
        self.set_upstream(other)
        return self

    def __rlshift__(self, other: Any) -> Any:
        """``[a, b] << self``."""
        self.set_downstream(other)
        return self


def _tell_relatives(self: DependencyMixin, other: Any, *, upstream: bool) -> None:
    items = [other] if isinstance(other, DependencyMixin) else other
    if isinstance(items, (list, tuple, set, frozenset)):
        for item in items:
            if isinstance(item, DependencyMixin):
                item.update_relative(self, upstream=upstream)


def flatten_relatives(
    other: DependencyMixin | Sequence[DependencyMixin], *, upstream: bool
) -> list[BaseOperator]:
    """The tasks an edge attaches to: leaves of what runs before, roots of what runs after."""
    items = [other] if isinstance(other, DependencyMixin) else other
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence | set | frozenset):
        raise TypeError(
            f"cannot set a dependency on {other!r}: expected a task, a task's output, "
            "or a list of them"
        )
    tasks: list[BaseOperator] = []
    for item in items:
        if not isinstance(item, DependencyMixin):
            raise TypeError(
                f"cannot set a dependency on {item!r}: expected a task or a task's output"
            )
        tasks.extend(item.leaves if upstream else item.roots)
    return tasks


def chain(*tasks: DependencyMixin | Sequence[DependencyMixin]) -> None:
    """Airflow's ``chain``: ``chain(a, [b, c], [d, e], f)`` is a >> b >> d >> f, a >> c >> e >> f.

    A task next to a list fans out (or in); two adjacent lists must have the same length and
    are joined pairwise.
    """
    for up, down in itertools.pairwise(tasks):
        if isinstance(up, DependencyMixin):
            up.set_downstream(down)
        elif isinstance(down, DependencyMixin):
            down.set_upstream(up)
        else:
            if len(up) != len(down):
                raise DagDefinitionError(
                    "chain() joins two adjacent lists pairwise, so they must have the same "
                    f"length; got {len(up)} and {len(down)}. Use cross_downstream() to join "
                    "every task of one list to every task of the other."
                )
            for up_task, down_task in zip(up, down, strict=True):
                up_task.set_downstream(down_task)


def cross_downstream(
    from_tasks: Sequence[DependencyMixin],
    to_tasks: DependencyMixin | Sequence[DependencyMixin],
) -> None:
    """Make every task of ``to_tasks`` run after every task of ``from_tasks``."""
    for task in from_tasks:
        task.set_downstream(to_tasks)


def is_dag(value: Any) -> bool:
    from statewright.sdk.dag import DAG

    return isinstance(value, DAG)


def common_dag(tasks: Sequence[BaseOperator]) -> DAG:
    dags: dict[int, DAG] = {}
    for task in tasks:
        if task.dag is not None:
            dags[id(task.dag)] = task.dag
    if not dags:
        names = ", ".join(repr(t.task_id) for t in tasks)
        raise DagDefinitionError(
            f"cannot set a dependency between tasks that belong to no DAG ({names}): create "
            "them inside `with DAG(...)`, inside a @dag function, or pass dag=..."
        )
    if len(dags) > 1:
        owners = ", ".join(f"{t.task_id!r} (DAG {t.dag_id!r})" for t in tasks if t.dag)
        raise DagDefinitionError(
            f"cannot set a dependency between tasks of different DAGs: {owners}."
        )
    return next(iter(dags.values()))
