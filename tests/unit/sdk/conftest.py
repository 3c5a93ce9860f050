from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from statewright.sdk import DAG, BaseOperator
from statewright.sdk.runtime import TaskOutcome, build_context, execute_task

LOGICAL_DATE = datetime(2024, 3, 1, 6, 0, tzinfo=UTC)


def run_task(
    dag: DAG,
    task_or_id: BaseOperator | str,
    *,
    xcoms: dict[str, Any] | None = None,
    conf: dict[str, Any] | None = None,
) -> TaskOutcome:
    task = dag.get_task(task_or_id) if isinstance(task_or_id, str) else task_or_id
    context = build_context(
        dag,
        task,
        run_id="manual__1",
        logical_date=LOGICAL_DATE,
        data_interval_start=LOGICAL_DATE,
        data_interval_end=LOGICAL_DATE,
        conf=conf,
        try_number=1,
        max_tries=task.retries,
        xcoms=xcoms or {},
    )
    return execute_task(task, context)


@pytest.fixture
def run() -> Any:
    return run_task
