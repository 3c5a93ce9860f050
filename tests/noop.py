"""A task that runs and does nothing, for tests that need a try through an executor.

An ``EmptyOperator``'s task instances never reach one: the scheduler sets them to success itself
(``statewright.core.empty_tasks``, as Airflow does). Tests that meant "a task that runs" use
``NoopOperator``; a DAG file that a task process loads uses a no-op ``@task`` instead (it cannot
import this module)."""

from __future__ import annotations

from typing import Any

from statewright.sdk import BaseOperator


class NoopOperator(BaseOperator):
    """Runs (a try, through the executor) and returns nothing."""

    def execute(self, context: Any) -> None:
        return None
