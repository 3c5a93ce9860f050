"""The empty-task rule (Airflow's EmptyOperator short-circuit): which operator classes run
nothing, which serialized tasks the scheduler sets to success itself, and the planner's part."""

from __future__ import annotations

from typing import Any

import pytest

from statewright.core import empty_tasks
from statewright.core.scheduling import plan_changed, plan_dependencies
from statewright.core.states import TI
from statewright.core.trigger_rules import TriggerRule
from statewright.sdk import DAG, Asset, BaseOperator, EmptyOperator, PythonOperator


class Quiet(EmptyOperator):
    """A subclass that keeps EmptyOperator's execute."""


class Valued(EmptyOperator):
    """An empty subclass with an argument to map over."""

    def __init__(self, *, value: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value = value


class Loud(EmptyOperator):
    def execute(self, context: Any) -> str:
        return "ran"


class DeclaredEmpty(BaseOperator):
    """A user's class declaring itself empty, as Airflow lets it."""

    inherits_from_empty_operator = True

    def execute(self, context: Any) -> None:
        return None


class LoudDeclared(DeclaredEmpty):
    def execute(self, context: Any) -> str:
        return "ran"


@pytest.mark.parametrize(("cls", "empty"), [
    (EmptyOperator, True), (Quiet, True), (DeclaredEmpty, True),
    (Loud, False), (LoudDeclared, False), (PythonOperator, False), (BaseOperator, False),
])
def test_which_classes_run_nothing(cls: type, empty: bool) -> None:
    assert empty_tasks.declares_empty(cls) is empty


def _serialized(**kwargs: Any) -> dict[str, Any]:
    with DAG("d") as dag:
        kwargs.setdefault("task_id", "t")
        cls = kwargs.pop("cls", EmptyOperator)
        cls(**kwargs)
    return {t["task_id"]: t for t in dag.serialize()["tasks"]}["t"]


def _noop(*args: Any) -> None:
    return None


@pytest.mark.parametrize(("kwargs", "skips"), [
    ({}, True),
    ({"cls": Quiet}, True),
    ({"on_failure_callback": _noop, "on_retry_callback": _noop}, True),  # no try calls them
    ({"cls": Loud}, False),
    ({"on_execute_callback": _noop}, False),
    ({"on_success_callback": _noop}, False),
    ({"outlets": [Asset("s3://bucket/out")]}, False),
    ({"inlets": [Asset("s3://bucket/in")]}, False),
])
def test_which_serialized_tasks_the_scheduler_sets_to_success(kwargs: dict[str, Any],
                                                               skips: bool) -> None:
    task = _serialized(**kwargs)
    assert empty_tasks.runs_nothing(task) is skips
    assert bool(task.get(empty_tasks.FLAG)) is (kwargs.get("cls", EmptyOperator) is not Loud)


def test_a_mapped_empty_task_expands_and_runs() -> None:
    with DAG("m") as dag:
        Valued.partial(task_id="t").expand(value=[0, 1])
    task = dag.serialize()["tasks"][0]
    assert not empty_tasks.runs_nothing(task)


def test_a_dag_without_empty_tasks_serializes_as_before() -> None:
    """The flag is written only where it is true: other DAGs' hashes do not change."""
    with DAG("p") as dag:
        PythonOperator(task_id="t", python_callable=_noop)
    assert empty_tasks.FLAG not in dag.serialize()["tasks"][0]


ORDER = ["a", "b", "c", "d"]
UP = {"a": (), "b": ("a",), "c": ("b",), "d": ("c",)}
RULES = {n: TriggerRule.ALL_SUCCESS for n in ORDER}


def test_the_planner_sets_a_chain_of_empty_tasks_to_success_in_one_pass() -> None:
    states = dict.fromkeys(ORDER, TI.NONE)
    planned = plan_dependencies(ORDER, UP, RULES, states, empty={"a", "b", "c"})
    # d runs: scheduled in the same pass as its empty upstreams succeeded
    assert planned == {"a": TI.SUCCESS, "b": TI.SUCCESS, "c": TI.SUCCESS, "d": TI.SCHEDULED}


def test_an_empty_task_waits_like_any_other() -> None:
    states = {"a": TI.RUNNING, "b": TI.NONE, "c": TI.NONE, "d": TI.NONE}
    assert plan_dependencies(ORDER, UP, RULES, states, empty={"b", "c"}) == {}
    states["a"] = TI.FAILED
    planned = plan_dependencies(ORDER, UP, RULES, states, empty={"b", "c"})
    assert planned == {"b": TI.UPSTREAM_FAILED, "c": TI.UPSTREAM_FAILED,
                       "d": TI.UPSTREAM_FAILED}


def test_the_incremental_planner_propagates_through_empty_tasks() -> None:
    states = {"a": TI.SUCCESS, "b": TI.NONE, "c": TI.NONE, "d": TI.NONE}
    down = {"a": ["b"], "b": ["c"], "c": ["d"]}
    position = {n: i for i, n in enumerate(ORDER)}
    planned = plan_changed(["b"], position, UP, down, RULES, states, empty={"b", "c"})
    assert planned == {"b": TI.SUCCESS, "c": TI.SUCCESS, "d": TI.SCHEDULED}
    blocked = plan_changed(["b"], position, UP, down, RULES, states, empty={"b"},
                           blocked=frozenset({"b"}))  # depends_on_past: not yet
    assert blocked == {}
