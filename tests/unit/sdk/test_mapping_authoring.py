"""Mapped tasks as written: what ``.partial()/.expand()/.expand_kwargs()`` accept, the graph
they make, what is serialized for the scheduler, and the definition-time errors."""

from __future__ import annotations

from typing import Any

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG, BaseOperator, BashOperator, task
from statewright.sdk.mappedoperator import MappedOperator


@task
def add(x: int, y: int = 0) -> int:
    return x + y


@task
def numbers() -> list[int]:
    return [1, 2]


class Echo(BaseOperator):
    def __init__(self, value: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value = value

    def execute(self, context: Any) -> Any:
        return self.value


def test_expand_makes_one_mapped_task_wired_to_what_it_maps_over() -> None:
    with DAG("d") as dag:
        out = add.partial(y=1).expand(x=numbers())
    mapped = dag.task_dict["add"]
    assert isinstance(mapped, MappedOperator) and out.operator is mapped
    assert mapped.upstream_task_ids == {"numbers"}
    serialized = {t["task_id"]: t for t in dag.serialize()["tasks"]}["add"]
    assert serialized["expand_input"] == {
        "type": "dict", "value": {"x": {"kind": "xcom", "task_id": "numbers", "key": None}}}
    assert serialized["operator"] == "@task"


def test_transformed_outputs_serialize_what_the_scheduler_counts() -> None:
    with DAG("d") as dag:
        n = numbers()
        add.expand(x=n.map(str).zip(n, fillvalue=None).concat(n))
    spec = {t["task_id"]: t for t in dag.serialize()["tasks"]}["add"]["expand_input"]
    assert spec["value"]["x"] == {"kind": "concat", "args": [
        {"kind": "zip", "fill": True, "args": [
            {"kind": "map", "arg": {"kind": "xcom", "task_id": "numbers", "key": None}},
            {"kind": "xcom", "task_id": "numbers", "key": None}]},
        {"kind": "xcom", "task_id": "numbers", "key": None}]}


def test_classic_operators_take_partial_then_expand_and_keep_scheduler_arguments() -> None:
    with DAG("d", default_args={"retries": 3}) as dag:
        Echo.partial(task_id="echo", pool_slots=2).expand(value=[1, 2])
        BashOperator.partial(task_id="bash").expand(bash_command=["echo 1", "echo 2"])
    echo = dag.task_dict["echo"]
    assert (echo.retries, echo.pool_slots) == (3, 2)
    assert echo.task_type == "Echo"


@pytest.mark.parametrize(("make", "needle"), [
    (lambda: add.expand(z=[1]), "unexpected keyword argument 'z'"),
    (lambda: add.expand(task_id=["a"]), "cannot map argument 'task_id'"),
    (lambda: add.expand(trigger_rule=["all_done"]), "cannot map argument 'trigger_rule'"),
    (lambda: Echo.partial(task_id="e").expand(trigger_rule=["all_done"]),
     "cannot map argument 'trigger_rule'"),
    (lambda: Echo.partial(task_id="e").expand(task_id=["a"]), "cannot map argument 'task_id'"),
    (lambda: Echo.partial(task_id="e").expand(nope=[1]), "unexpected keyword argument 'nope'"),
    (lambda: Echo.partial(task_id="e", nope=1).expand(value=[1]), "'nope'"),
    (lambda: Echo.partial().expand(value=[1]), "needs a task_id"),
    (lambda: Echo.partial(task_id="e").expand(), "at least one argument"),
    (lambda: Echo.partial(task_id="e").expand(value=5), "got a int for argument 'value'"),
    (lambda: Echo.partial(task_id="e", value=1).expand(value=[2]),
     "given to both partial() and expand()"),
    (lambda: add.partial(x=1).expand(x=[2]), "given to both partial() and expand()"),
    (lambda: add.expand_kwargs(5), "takes a list of dicts or the output of a task"),
    (lambda: add.expand_kwargs([{"x": 1}, 2]), "one item is a int"),
    (lambda: add.expand_kwargs([{"q": 1}]), "unexpected keyword argument 'q'"),
    (lambda: BashOperator.partial(task_id="b").expand(env=[{}]), "'bash_command'"),
    (lambda: Echo.partial(task_id="e", map_index_template=3).expand(value=[1]),
     "map_index_template must be a string"),
    (lambda: Echo.partial(task_id="e", max_active_tis_per_dagrun=0).expand(value=[1]),
     "max_active_tis_per_dagrun must be at least 1"),
])
def test_bad_mapping_is_refused_when_the_dag_is_defined(make: Any, needle: str) -> None:
    with DAG("d"), pytest.raises(DagDefinitionError) as info:
        make()
    assert needle in str(info.value)


def test_a_mapped_output_cannot_be_iterated_while_the_dag_is_defined() -> None:
    with DAG("d"):
        out = add.expand(x=[1, 2])
        with pytest.raises(TypeError, match="not known until that task runs"):
            list(out)


def test_map_zip_concat_take_callables_and_outputs() -> None:
    with DAG("d"):
        n = numbers()
        with pytest.raises(DagDefinitionError, match="takes a callable"):
            n.map(3)
        with pytest.raises(DagDefinitionError, match="outputs of other tasks"):
            n.zip([1, 2])
        with pytest.raises(DagDefinitionError, match="outputs of other tasks"):
            n.concat("abc")


def test_an_unmapped_task_accepts_map_index_template_as_in_airflow() -> None:
    with DAG("d") as dag:
        Echo(task_id="plain", value=1, map_index_template="{{ task.value }}")
    assert dag.task_dict["plain"].map_index_template == "{{ task.value }}"
