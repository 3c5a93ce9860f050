"""Airflow 3's own example DAGs for task groups, the sensor decorator, TaskFlow, XComArgs and
edge labels (``tests/fixtures/airflow_examples``, only their imports changed, by
``tests/airflow_examples.py``) load and end as in Airflow, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine
from tests.airflow_examples import airflow_example

from statewright.sdk.loader import load_dag_file

FILES = {
    "core/example_task_group.py": ["example_task_group"],
    "core/example_task_group_decorator.py": ["example_task_group_decorator"],
    "standard/example_sensor_decorator.py": ["example_sensor_decorator"],
    "core/tutorial_taskflow_api.py": ["tutorial_taskflow_api"],
    "core/example_xcomargs.py": ["example_xcom_args", "example_xcom_args_with_operators"],
    "core/example_branch_labels.py": ["example_branch_labels"],
}


def _load(file: str, dag_id: str):  # type: ignore[no-untyped-def]
    loaded = load_dag_file(airflow_example(file))
    assert loaded.error is None, loaded.error
    return loaded.dags[dag_id]


def test_every_file_loads_with_its_dags() -> None:
    for file, dag_ids in FILES.items():
        loaded = load_dag_file(airflow_example(file))
        assert loaded.error is None, f"{file}: {loaded.error}"
        assert sorted(loaded.dags) == sorted(dag_ids)


def test_only_the_imports_were_changed() -> None:
    for file in FILES:
        text = airflow_example(file).read_text()
        assert "Licensed to the Apache Software Foundation" in text
        assert "airflow" not in "\n".join(
            line for line in text.splitlines() if line.startswith(("from ", "import ")))


@pytest.mark.parametrize(("file", "dag_id"), [(f, d) for f, ids in FILES.items() for d in ids])
def test_every_run_succeeds_task_by_task(engine: Engine, file: str, dag_id: str) -> None:
    dag = _load(file, dag_id)
    result = dag.test(engine=engine)
    assert result.state.value == "success", result.states
    assert set(result.states) == set(dag.task_ids)
    assert set(result.states.values()) == {"success"}


def test_task_group_example_shape() -> None:
    dag = _load("core/example_task_group.py", "example_task_group")
    assert dag.task_ids == [
        "start", "section_1.task_1", "section_1.task_2", "section_1.task_3", "section_2.task_1",
        "section_2.inner_section_2.task_2", "section_2.inner_section_2.task_3",
        "section_2.inner_section_2.task_4", "end"]
    up = {t.task_id: t.upstream_task_ids for t in dag.tasks}
    assert up["section_1.task_1"] == {"start"}
    # section_1's leaves (task_2, task_3) lead to section_2's roots (task_1, task_2, task_3)
    for root in ("section_2.task_1", "section_2.inner_section_2.task_2",
                 "section_2.inner_section_2.task_3"):
        assert up[root] == {"section_1.task_2", "section_1.task_3"}
    assert up["end"] == {"section_2.task_1", "section_2.inner_section_2.task_4"}
    groups = {g["group_id"]: (g["parent"], g["tooltip"]) for g in dag.serialize()["task_groups"]}
    assert groups == {
        "section_1": (None, "Tasks for section_1"),
        "section_2": (None, "Tasks for section_2"),
        "section_2.inner_section_2": ("section_2", "Tasks for inner_section2"),
    }


def test_task_group_decorator_example_values(engine: Engine) -> None:
    dag = _load("core/example_task_group_decorator.py", "example_task_group_decorator")
    result = dag.test(engine=engine)
    for i, suffix in enumerate(["", "__1", "__2", "__3", "__4"]):
        group = f"task_group_function{suffix}"
        assert result.ti(f"{group}.task_2").return_value == f"[ Task2 [ Task1 {i} ] ]"
        assert dag.get_task(f"{group}.task_1").upstream_task_ids == {"task_start"}
    assert len(dag.get_task("task_end").upstream_task_ids) == 5


def test_taskflow_tutorial_and_sensor_values(engine: Engine) -> None:
    tutorial = _load("core/tutorial_taskflow_api.py", "tutorial_taskflow_api").test(engine=engine)
    assert tutorial.ti("transform").return_value == {"total_order_value": pytest.approx(1236.7)}
    sensor = _load("standard/example_sensor_decorator.py",
                   "example_sensor_decorator").test(engine=engine)
    assert sensor.ti("wait_for_upstream").return_value == "xcom_value"


def test_xcomargs_example_order() -> None:
    dag = _load("core/example_xcomargs.py", "example_xcom_args_with_operators")
    assert [t.task_id for t in dag.topological_sort()] == ["c", "print_value", "print_value__1",
                                                          "d"]


def test_branch_labels_example_labels_its_edges() -> None:
    data = _load("core/example_branch_labels.py", "example_branch_labels").serialize()
    assert data["edge_info"] == [
        {"upstream": "check_integrity", "downstream": "describe_integrity",
         "label": "Errors found"},
        {"upstream": "check_integrity", "downstream": "save", "label": "No errors"},
    ]
