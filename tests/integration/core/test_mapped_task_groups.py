"""Mapped task groups run by ``dag.test()``: every task of the group mapped by the group's
expand input, instance ``i`` of a task depending only on instance ``i`` of its upstream in the
group, and a task outside the group seeing every instance."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine

from statewright.sdk import DAG, task, task_group


def _mapped(result: Any, task_id: str) -> dict[int, Any]:
    return {ti.map_index: ti for ti in result.task_instances.values() if ti.task_id == task_id}


def _states(result: Any, task_id: str) -> dict[int, str]:
    return {m: ti.state.value for m, ti in _mapped(result, task_id).items()}


def test_each_instance_of_the_group_runs_on_its_item_and_the_outside_gets_every_result(
        engine: Engine) -> None:
    with DAG("mg_results", schedule=None) as dag:
        @task
        def add_one(x: int) -> int:
            return x + 1

        @task
        def double(x: int) -> int:
            return x * 2

        @task_group
        def group(x: int) -> Any:
            return double(add_one(x))

        @task
        def collect(values: Any) -> list[int]:
            return list(values)

        collect(group.expand(x=[1, 2, 3]))
    result = dag.test(engine=engine)
    assert result.state.value == "success", result.states
    assert {m: ti.return_value for m, ti in _mapped(result, "group.add_one").items()} == {
        0: 2, 1: 3, 2: 4}
    assert {m: ti.return_value for m, ti in _mapped(result, "group.double").items()} == {
        0: 4, 1: 6, 2: 8}
    assert result.ti("collect").return_value == [4, 6, 8]


def test_a_failed_instance_fails_only_its_own_downstream_in_the_group(engine: Engine) -> None:
    with DAG("mg_failure", schedule=None) as dag:
        @task
        def check(x: int) -> int:
            if x == 2:
                raise ValueError("two is refused")
            return x

        @task
        def after(x: int) -> int:
            return x * 10

        @task_group
        def group(x: int) -> Any:
            return after(check(x))

        @task(trigger_rule="all_done")
        def report(values: Any) -> list[int]:
            return list(values)

        @task
        def strict(values: Any) -> int:
            return len(values)

        out = group.expand(x=[1, 2, 3])
        report(out)
        strict(out)
    result = dag.test(engine=engine)
    assert _states(result, "group.check") == {0: "success", 1: "failed", 2: "success"}
    assert _states(result, "group.after") == {0: "success", 1: "upstream_failed", 2: "success"}
    assert result.ti("report").return_value == [10, 30]  # index 1 stored nothing
    assert result.ti("strict").state.value == "upstream_failed"
    assert result.state.value == "failed"


def test_zero_items_skip_every_task_of_the_group(engine: Engine) -> None:
    with DAG("mg_empty", schedule=None) as dag:
        @task
        def nothing() -> list[int]:
            return []

        @task
        def one(x: int) -> int:
            return x

        @task
        def two(x: int) -> int:
            return x

        @task_group
        def group(x: int) -> Any:
            return two(one(x))

        @task(trigger_rule="all_done")
        def count(values: Any) -> int:
            return len(values)

        count(group.expand(x=nothing()))
    result = dag.test(engine=engine)
    assert _states(result, "group.one") == {-1: "skipped"}
    assert _states(result, "group.two") == {-1: "skipped"}
    assert result.ti("count").return_value == 0
    assert result.state.value == "success"


def test_partial_and_expand_kwargs_give_fixed_and_per_instance_arguments(
        engine: Engine) -> None:
    with DAG("mg_kwargs", schedule=None) as dag:
        @task
        def combine(a: int, b: int, sep: str) -> str:
            return f"{a}{sep}{b}"

        @task
        def pairs() -> list[dict[str, int]]:
            return [{"a": 1, "b": 2}, {"a": 3, "b": 4}]

        @task_group
        def group(a: int, b: int, sep: str) -> Any:
            return combine(a, b, sep)

        @task
        def collect(values: Any) -> list[str]:
            return list(values)

        collect(group.partial(sep="-").expand_kwargs(pairs()))
        collect.override(task_id="literal")(
            group.partial(sep="+").expand_kwargs([{"a": 5, "b": 6}]))
    result = dag.test(engine=engine)
    assert result.state.value == "success", result.states
    assert result.ti("collect").return_value == ["1-2", "3-4"]
    assert result.ti("literal").return_value == ["5+6"]


def test_the_airflow_docs_mapped_task_group_examples(engine: Engine) -> None:
    with DAG("mg_docs", schedule=None) as dag:
        @task
        def convert_to_yaml(filename: str) -> str:
            return filename.replace(".json", ".yaml")

        @task
        def replace_defaults(converted: str) -> str:
            return f"final/{converted}"

        @task_group
        def file_transforms(filename: str) -> Any:
            converted = convert_to_yaml(filename)
            return replace_defaults(converted)

        file_transforms.expand(filename=["data1.json", "data2.json"])

        @task_group(group_id="group1")
        def tg1(my_num: int) -> None:
            @task
            def print_num(num: int) -> int:
                return num

            @task
            def add_42(num: int) -> int:
                return num + 42

            print_num(my_num) >> add_42(my_num)

        tg1.expand(my_num=[19, 23])
    result = dag.test(engine=engine)
    assert result.state.value == "success", result.states
    assert {m: ti.return_value for m, ti in
            _mapped(result, "file_transforms.replace_defaults").items()} == {
        0: "final/data1.yaml", 1: "final/data2.yaml"}
    assert {m: ti.return_value for m, ti in _mapped(result, "group1.add_42").items()} == {
        0: 61, 1: 65}
