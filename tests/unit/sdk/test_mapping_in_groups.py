"""Mapped tasks inside task groups: the group prefixes the mapped task, and each instance runs."""

from __future__ import annotations

from datetime import datetime

from statewright.sdk import DAG, BashOperator, TaskGroup, task


def test_a_mapped_taskflow_task_in_a_group_carries_the_prefix_and_runs_per_index() -> None:
    with DAG("mapped_in_group", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
        with TaskGroup("g"):
            @task
            def add(x: int) -> int:
                return x + 1

            @task
            def total(xs: list[int]) -> int:
                return sum(xs)

            total(add.expand(x=[1, 2, 3]))
    assert dag.task_ids == ["g.add", "g.total"]
    result = dag.test()
    assert str(result.state) == "success"
    assert result.ti("g.total").return_value == 9
    assert sorted(ti.map_index for ti in result.task_instances.values()
                  if ti.task_id == "g.add") == [0, 1, 2]


def test_a_mapped_operator_in_a_group_and_the_same_label_twice_in_two_groups() -> None:
    with DAG("mapped_ops_in_groups", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
        for name in ("a", "b"):
            with TaskGroup(name):
                BashOperator.partial(task_id="echo").expand(
                    bash_command=[f"echo {name}1", f"echo {name}2"])
    assert dag.task_ids == ["a.echo", "b.echo"]
    result = dag.test()
    assert str(result.state) == "success"
    assert len(result.task_instances) == 4
