"""``ExternalTaskSensor(external_task_group_id=...)``: its arguments, what it defers with, and
how its trigger decides from each external run's group states (no database)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.core.task_groups import group_task_ids
from statewright.sdk import DAG, EmptyOperator, TaskGroup
from statewright.sdk.runtime import build_context, execute_task
from statewright.sdk.sensors import ExternalTaskSensor, ExternalTaskTrigger

T0 = datetime(2026, 5, 1, tzinfo=UTC)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"external_task_id": "a"}, "not both"),
    ({"external_task_ids": ["a", "b"]}, "not both"),
    ({"external_task_group_id": ""}, "non-empty string"),
    ({"external_task_group_id": ["g"]}, "non-empty string"),
])
def test_a_task_group_is_waited_for_alone(kwargs: dict[str, Any], message: str) -> None:
    kwargs.setdefault("external_task_group_id", "g")
    with DAG("d"), pytest.raises(DagDefinitionError, match=message):
        ExternalTaskSensor(task_id="s", external_dag_id="up", **kwargs)


def test_the_sensor_defers_with_the_group_and_its_dates() -> None:
    with DAG("d") as dag:
        s = ExternalTaskSensor(task_id="s", external_dag_id="up", external_task_group_id="g",
                               execution_delta=timedelta(hours=1), failed_states=["failed"],
                               timeout=60)
    context = build_context(dag, s, run_id="r", logical_date=T0, data_interval_start=T0,
                            data_interval_end=T0, conf={}, try_number=1, max_tries=0, xcoms={})
    outcome = execute_task(s, context)
    assert outcome.kind == "deferred"
    kwargs = outcome.extra["deferral"]["trigger_kwargs"]
    assert kwargs["external_task_group_id"] == "g" and kwargs["external_task_ids"] is None
    assert kwargs["logical_dates"][0]["value"] == (T0 - timedelta(hours=1)).isoformat()
    assert outcome.extra["deferral"]["timeout"] == 60


def _trigger(dates: int = 1, **kwargs: Any) -> ExternalTaskTrigger:
    return ExternalTaskTrigger("up", [T0 - timedelta(days=i) for i in range(dates)],
                               external_task_group_id="g", **kwargs)


def test_a_run_counts_once_its_whole_group_is_in_the_states() -> None:
    trig = _trigger(dates=2, failed_states=["failed"], skipped_states=["skipped"])
    assert trig.decide_group([]) is None  # no run yet
    assert trig.decide_group([["success", "success"]]) is None  # one of two runs
    assert trig.decide_group([["success", "success"], ["success", "running"]]) is None
    assert trig.decide_group([["success"], ["success", "success"]]) == "success"
    assert trig.decide_group([["skipped", "skipped"], ["running"]]) == "skipped"
    assert trig.decide_group([["failed", "failed"], ["success"]]) == "failed"


def test_a_group_fails_only_when_all_its_task_instances_failed() -> None:
    """Airflow 3's rule: one failed task with others upstream_failed is not a failed group."""
    trig = _trigger(failed_states=["failed"])
    assert trig.decide_group([["failed", "upstream_failed"]]) is None
    assert _trigger(failed_states=["failed", "upstream_failed"]).decide_group(
        [["failed", "upstream_failed"]]) == "failed"


class Reader:
    def __init__(self, runs: list[list[str]]) -> None:
        self.runs = runs
        self.asked: list[tuple[Any, ...]] = []

    def __call__(self, dag_id: str, task_ids: Any, dates: Any) -> list[str]:
        raise AssertionError("a group is read with group_states")

    def group_states(self, dag_id: str, group_id: str, dates: Any) -> list[list[str]]:
        self.asked.append((dag_id, group_id, list(dates)))
        return self.runs


def test_the_trigger_reads_the_groups_states_and_fires() -> None:
    trig = _trigger()
    trig.state_reader = Reader([["success", "success"]])

    async def first() -> Any:
        async for event in trig.run():
            return event.payload

    assert asyncio.run(first()) == {"status": "success", "states": ["success", "success"]}
    assert trig.state_reader.asked == [("up", "g", [T0])]  # type: ignore[attr-defined]
    kind, kwargs = trig.serialize()
    assert kind.endswith("ExternalTaskTrigger") and kwargs["external_task_group_id"] == "g"
    assert ExternalTaskTrigger(**kwargs).external_task_group_id == "g"


def test_group_task_ids_takes_nested_groups_and_nothing_else() -> None:
    with DAG("up") as dag:
        with TaskGroup("outer"):
            EmptyOperator(task_id="a")
            with TaskGroup("inner"):
                EmptyOperator(task_id="b")
            with TaskGroup("flat", prefix_group_id=False):
                EmptyOperator(task_id="c")
        with TaskGroup("other"):
            EmptyOperator(task_id="d")
        EmptyOperator(task_id="e")
    serialized = dag.serialize()
    assert sorted(group_task_ids(serialized, "outer")) == ["c", "outer.a", "outer.inner.b"]
    assert group_task_ids(serialized, "outer.inner") == ["outer.inner.b"]
    assert group_task_ids(serialized, "missing") == []
