"""dag_display_name and task_display_name; WeekDay and DayOfWeekSensor."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG, EmptyOperator, WeekDay, task
from statewright.sdk.sensors import DayOfWeekSensor
from statewright.sdk.sensors import base as sensor_base


def test_display_names_default_to_the_ids_and_are_serialised_when_set() -> None:
    with DAG("dn", schedule=None, start_date=datetime(2024, 1, 1),
             dag_display_name="Sample DAG") as dag:
        EmptyOperator(task_id="a", task_display_name="Task A")

        @task(task_display_name="Task B")
        def b() -> None: ...
        b()
        EmptyOperator(task_id="c")
    assert dag.dag_display_name == "Sample DAG"
    assert [t.task_display_name for t in dag.tasks] == ["Task A", "Task B", "c"]
    data = dag.serialize()
    assert data["dag_display_name"] == "Sample DAG"
    assert {t["task_id"]: t.get("task_display_name") for t in data["tasks"]} == {
        "a": "Task A", "b": "Task B", "c": None}
    plain = DAG("plain", schedule=None, start_date=datetime(2024, 1, 1))
    assert plain.dag_display_name == "plain" and "dag_display_name" not in plain.serialize()


def test_a_display_name_that_is_not_text_is_refused() -> None:
    with pytest.raises(DagDefinitionError, match="dag_display_name"):
        DAG("bad", schedule=None, dag_display_name=3)  # type: ignore[arg-type]
    with pytest.raises(DagDefinitionError, match="task_display_name"):
        EmptyOperator(task_id="bad", task_display_name=["x"])  # type: ignore[arg-type]


def test_day_of_week_sensor_checks_today_or_the_logical_date(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monday = datetime(2024, 1, 1, tzinfo=UTC)  # a Monday
    monkeypatch.setattr(sensor_base, "_now", lambda: monday)
    weekend = DayOfWeekSensor(task_id="w", week_day={WeekDay.SATURDAY, "Sunday"})
    assert weekend.poke({}) is False
    assert DayOfWeekSensor(task_id="m", week_day="monday").poke({}) is True
    by_date = DayOfWeekSensor(task_id="d", week_day=WeekDay.SUNDAY, use_task_logical_date=True)
    assert by_date.poke({"logical_date": datetime(2024, 1, 7, tzinfo=UTC)}) is True
    with pytest.raises(DagDefinitionError, match="Funday"):
        DayOfWeekSensor(task_id="x", week_day="Funday")
