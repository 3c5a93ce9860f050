"""EmptyOperator: a task that does nothing (a join point, a placeholder)."""

from __future__ import annotations

from typing import Any

from statewright.sdk.baseoperator import BaseOperator


class EmptyOperator(BaseOperator):
    """Does nothing and succeeds."""

    def execute(self, context: Any) -> None:
        return None
