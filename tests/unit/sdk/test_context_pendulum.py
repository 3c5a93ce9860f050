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


def test_equal_instants_in_other_zones_keep_their_zone() -> None:
    """The context's dates are converted once per process and date (a cache): an instant equal
    to one converted before, but written in another zone, is still given in its own zone."""
    from datetime import timedelta, timezone

    from statewright.sdk.context import _pendulum

    utc = _pendulum(datetime(2025, 1, 6, 10, tzinfo=UTC))
    paris = _pendulum(datetime(2025, 1, 6, 11, tzinfo=timezone(timedelta(hours=1))))
    naive = _pendulum(datetime(2025, 1, 6, 10))
    assert utc == paris and utc is not None and paris is not None and naive is not None
    assert (utc.hour, paris.hour) == (10, 11)
    assert paris.utcoffset() == timedelta(hours=1)
    assert naive.utcoffset() == timedelta(0) and isinstance(naive, pendulum.DateTime)
    assert _pendulum(None) is None
