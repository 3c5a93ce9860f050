"""EmptyOperator: a task that does nothing (a join point, a placeholder)."""

from __future__ import annotations

from typing import Any

from statewright.sdk.baseoperator import BaseOperator


class EmptyOperator(BaseOperator):
    """Does nothing and succeeds: the scheduler sets its task instances to success itself,
    without an executor, unless it has an on_execute or on_success callback, outlets or inlets
    (``statewright.core.empty_tasks``). A subclass that overrides ``execute`` runs."""

    inherits_from_empty_operator = True

    def execute(self, context: Any) -> None:
        return None
