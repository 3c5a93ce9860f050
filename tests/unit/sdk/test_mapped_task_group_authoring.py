"""Authoring mapped task groups: every task of the group carries the group's expand input, the
function's parameters are references, edges to what the group maps over, the serialized form,
and the clear errors for what is refused."""

from __future__ import annotations

from typing import Any

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG, BashOperator, EmptyOperator, task, task_group
from statewright.sdk.mappedtaskgroup import MappedArgument, MappedTaskGroup
from statewright.sdk.serialization import serialize_dag


@task
def add_one(x: int) -> int:
    return x + 1


@task
def double(x: int) -> int:
    return x * 2


def test_every_task_of_the_group_is_mapped_by_the_groups_expand_input() -> None:
    seen: dict[str, Any] = {}

    @task_group
    def group(x: int) -> Any:
        seen["x"] = x
        return double(add_one(x))

    with DAG("d", schedule=None) as dag:
        @task
        def nums() -> list[int]:
            return [1, 2]

        out = group.expand(x=nums())
    assert isinstance(seen["x"], MappedArgument)
    assert isinstance(dag.task_group_dict["group"], MappedTaskGroup)
    first, second = dag.task_dict["group.add_one"], dag.task_dict["group.double"]
    assert first.is_mapped and second.is_mapped
    assert first.expand_input is second.expand_input
    # each task of the group reads the expand input, so each depends on what it maps over
    assert first.upstream_task_ids == {"nums"}
    assert second.upstream_task_ids == {"nums", "group.add_one"}
    assert out.operator is second
    tasks = {t["task_id"]: t for t in serialize_dag(dag)["tasks"]}
    for tid in ("group.add_one", "group.double"):
        assert tasks[tid]["mapped_task_group"] == "group"
        assert tasks[tid]["expand_input"] == {
            "type": "dict", "value": {"x": {"kind": "xcom", "task_id": "nums", "key": None}}}
    assert "mapped_task_group" not in tasks["nums"]
    groups = {g["group_id"]: g for g in serialize_dag(dag)["task_groups"]}
    assert groups["group"]["is_mapped"] is True


def test_a_plain_group_nested_in_a_mapped_group_is_mapped_too() -> None:
    @task_group
    def outer(x: int) -> None:
        @task_group
        def inner(y: int) -> None:
            add_one(y)

        inner(x)

    with DAG("d", schedule=None) as dag:
        outer.expand(x=[1, 2])
    assert dag.task_dict["outer.inner.add_one"].is_mapped


def test_partial_arguments_are_passed_as_they_are() -> None:
    seen: dict[str, Any] = {}

    @task_group
    def group(x: int, factor: int) -> None:
        seen.update(x=x, factor=factor)
        add_one(x)

    with DAG("d", schedule=None):
        group.partial(factor=3).expand(x=[1])
    assert seen["factor"] == 3
    assert isinstance(seen["x"], MappedArgument)


@pytest.mark.parametrize(("build", "message"), [
    (lambda g: g.expand(y=[1]), "unexpected keyword argument 'y'"),
    (lambda g: g.partial(x=1).expand(x=[2]), "given to both partial\\(\\) and expand\\(\\)"),
    (lambda g: g.partial(z=1), "partial\\(\\) got unexpected argument\\(s\\) 'z'"),
    (lambda g: g.expand(x=5), "expand\\(\\) got a int for argument 'x'"),
    (lambda g: g.expand(), "at least one argument"),
    (lambda g: g.expand_kwargs([{"y": 1}]), "unexpected keyword argument 'y'"),
    (lambda g: g.expand_kwargs("abc"), "takes a list of dicts"),
])
def test_bad_expand_arguments_are_refused_by_name(build: Any, message: str) -> None:
    @task_group
    def group(x: int) -> None:
        add_one(x)

    with DAG("d", schedule=None) as dag, pytest.raises(DagDefinitionError, match=message):
        build(group)
    assert "group.add_one" not in dag.task_dict


def test_a_task_expanded_inside_a_mapped_group_is_refused() -> None:
    @task_group
    def group(x: int) -> None:
        add_one.expand(x=[1, 2])

    with DAG("d", schedule=None), pytest.raises(DagDefinitionError,
                                                match="nested mapping is not supported"):
        group.expand(x=[1])

    @task_group
    def operators(x: int) -> None:
        BashOperator.partial(task_id="echo").expand(bash_command=["a"])

    with DAG("d2", schedule=None), pytest.raises(DagDefinitionError,
                                                 match=r"task 'operators\.echo'"):
        operators.expand(x=[1])


def test_a_mapped_group_inside_a_mapped_group_is_refused() -> None:
    @task_group
    def inner(y: int) -> None:
        add_one(y)

    @task_group
    def outer(x: int) -> None:
        inner.expand(y=[1])

    with DAG("d", schedule=None), pytest.raises(DagDefinitionError,
                                                match="nested mapped task groups"):
        outer.expand(x=[1])


def test_a_groups_argument_cannot_be_indexed_or_transformed() -> None:
    @task_group
    def group(x: Any) -> None:
        with pytest.raises(TypeError, match="cannot be indexed"):
            x["key"]
        with pytest.raises(DagDefinitionError, match="map\\(\\)"):
            x.map(str)
        EmptyOperator(task_id="e")

    with DAG("d", schedule=None):
        group.expand(x=[{"key": 1}])


def test_a_branch_inside_a_mapped_group_is_refused() -> None:
    @task_group
    def group(x: str) -> None:
        @task.branch
        def choose(value: str) -> str:
            return "group.a"

        choose(x) >> EmptyOperator(task_id="a")

    with DAG("d", schedule=None), pytest.raises(DagDefinitionError,
                                                match="skipping per map index"):
        group.expand(x=["a"])
