"""The context's dates are pendulum DateTimes, as Airflow's: templates and tasks call their
methods (``in_timezone``, ``add``, ``start_of``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pendulum

from statewright.sdk import DAG, PythonOperator


def test_templates_and_tasks_get_pendulum_datetimes() -> None:
    seen: list[Any] = []

    def look(templates_dict: dict[str, str], **context: Any) -> None:
        seen.append((templates_dict["seoul"], type(context["logical_date"]),
                     context["data_interval_end"].add(days=1).day))

    with DAG("dates", schedule="@daily", start_date=datetime(2024, 1, 1)) as dag:
        PythonOperator(task_id="look", python_callable=look, templates_dict={
            "seoul": "{{ data_interval_end.in_timezone('Asia/Seoul').hour }}"})
    result = dag.test(logical_date=datetime(2025, 1, 6, tzinfo=UTC))
    assert result.states == {"look": "success"}
    ((seoul, kind, day),) = seen
    assert seoul == "9" and issubclass(kind, pendulum.DateTime)
    assert day == 7  # Airflow 3: a cron schedule's run has the interval [logical, logical]
