"""Edge labels: ``a >> Label("on success") >> b`` (Airflow's ``EdgeModifier`` / ``Label``).

A label stands between the two sides of ``>>``: it remembers what was put before it, and when
something is put after it, it joins the two (as ``a >> b`` would) and records its label on each
edge it made, in the DAG's ``edge_info``. The graph view shows the labels on the edges.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from statewright.core.errors import DagDefinitionError
from statewright.sdk._dependency import DependencyMixin, flatten_relatives

if TYPE_CHECKING:
    from statewright.sdk.baseoperator import BaseOperator

__all__ = ["EdgeModifier", "Label"]


class EdgeModifier(DependencyMixin):
    """Something put between two sides of ``>>`` that changes the edges made across it."""

    def __init__(self, label: str | None = None) -> None:
        if label is not None and not isinstance(label, str):
            raise DagDefinitionError(f"an edge label must be a string, got {label!r}.")
        self.label = label
        self._upstream: list[DependencyMixin] = []
        self._downstream: list[DependencyMixin] = []

    def __repr__(self) -> str:
        return f"Label({self.label!r})"

    @property
    def roots(self) -> list[BaseOperator]:
        return [t for item in self._downstream for t in item.roots]

    @property
    def leaves(self) -> list[BaseOperator]:
        return [t for item in self._upstream for t in item.leaves]

    def update_relative(self, other: DependencyMixin, *, upstream: bool) -> None:
        """``other >> self`` (upstream=True) or ``other << self``: remember ``other``."""
        side = self._upstream if upstream else self._downstream
        if other not in side:
            side.append(other)

    def set_downstream(self, other: DependencyMixin | Sequence[DependencyMixin]) -> None:
        """``self >> other``: join everything before the label to ``other``, labelled."""
        items = _as_items(other)
        for item in items:
            item.update_relative(self, upstream=True)
        self._join(self.leaves, flatten_relatives(other, upstream=False))
        self._downstream.extend(i for i in items if i not in self._downstream)

    def set_upstream(self, other: DependencyMixin | Sequence[DependencyMixin]) -> None:
        """``self << other``: join ``other`` to everything after the label, labelled."""
        items = _as_items(other)
        for item in items:
            item.update_relative(self, upstream=False)
        self._join(flatten_relatives(other, upstream=True), self.roots)
        self._upstream.extend(i for i in items if i not in self._upstream)

    def _join(self, ups: list[BaseOperator], downs: list[BaseOperator]) -> None:
        for up in ups:
            up.set_downstream(downs)
            dag = up.dag
            if dag is None or self.label is None:
                continue
            for down in downs:
                dag.set_edge_info(up.task_id, down.task_id, {"label": self.label})


def Label(label: str) -> EdgeModifier:
    """An edge label: ``a >> Label("yes") >> b`` shows "yes" on the edge from a to b."""
    if not isinstance(label, str) or not label:
        raise DagDefinitionError(f"Label() takes a non-empty string, got {label!r}.")
    return EdgeModifier(label)


def _as_items(other: Any) -> list[DependencyMixin]:
    items = [other] if isinstance(other, DependencyMixin) else other
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence | set | frozenset):
        raise TypeError(
            f"cannot set a dependency on {other!r}: expected a task, a task's output, a task "
            "group, or a list of them")
    return list(items)
