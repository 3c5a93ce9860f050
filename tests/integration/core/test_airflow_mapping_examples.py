"""Airflow's own dynamic task mapping example DAGs (``airflow/example_dags``, Apache License 2.0,
in ``tests/fixtures/airflow_examples/core``, only their imports changed by
``tests/airflow_examples.py``) load and their runs end as in Airflow, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine
from tests.airflow_examples import airflow_example

from statewright.sdk.loader import load_dag_file


def _load(name: str) -> dict[str, Any]:
    loaded = load_dag_file(airflow_example(f"core/{name}.py"))
    assert loaded.error is None, loaded.error
    return dict(loaded.dags)


def _values(result: Any, task_id: str) -> list[Any]:
    return [t.return_value for t in sorted(
        (t for t in result.task_instances.values() if t.task_id == task_id),
        key=lambda t: t.map_index)]


def test_example_dynamic_task_mapping(engine: Engine, capfd: Any) -> None:
    dags = _load("example_dynamic_task_mapping")
    assert set(dags) == {"example_dynamic_task_mapping", "example_task_mapping_second_order",
                         "example_task_group_mapping"}  # Airflow 3.3 added the third

    first = dags["example_dynamic_task_mapping"].test(engine=engine)
    assert first.state.value == "success", first.states
    assert _values(first, "add_one") == [2, 3, 4]
    assert first.ti("sum_it").state.value == "success"
    assert "Total was 9" in capfd.readouterr().out

    second = dags["example_task_mapping_second_order"].test(engine=engine)
    assert second.state.value == "success", second.states
    assert _values(second, "get_nums") == [[1, 2, 3]]
    assert _values(second, "times_2") == [2, 4, 6]
    assert _values(second, "add_10") == [12, 14, 16]

    third = dags["example_task_group_mapping"].test(engine=engine)  # a mapped task group
    assert third.state.value == "success", third.states
    assert _values(third, "op.add_1") == [2, 3, 4]
    assert _values(third, "op.mul_2") == [4, 6, 8]


def test_example_dynamic_task_mapping_with_no_taskflow_operators(engine: Engine) -> None:
    dag = _load("example_dynamic_task_mapping_with_no_taskflow_operators")[
        "example_dynamic_task_mapping_with_no_taskflow_operators"]
    result = dag.test(engine=engine)
    assert result.state.value == "success", result.states
    assert _values(result, "add_one") == [2, 3, 4]
    assert result.ti("sum_it").return_value == 9
