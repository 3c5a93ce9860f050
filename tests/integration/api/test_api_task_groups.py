"""The API shows task groups and edge labels: a DAG's tasks say their group, its groups and
labelled dependencies are listed, and the grid's rows carry their group."""

from __future__ import annotations

from api_helpers import add_runs, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.sdk import DAG, Label, TaskGroup


def _grouped_dag() -> DAG:
    with DAG("grouped") as dag:
        start = NoopOperator(task_id="start")
        with TaskGroup("outer", tooltip="Outer things") as outer:
            NoopOperator(task_id="a")
            with TaskGroup("inner"):
                NoopOperator(task_id="b")
        end = NoopOperator(task_id="end")
        start >> Label("begin") >> outer >> end
    return dag


def test_dag_detail_lists_groups_task_groups_and_labelled_edges(client: TestClient,
                                                                engine: Engine) -> None:
    store_dag(engine, _grouped_dag())
    body = client.get("/api/v1/dags/grouped").json()
    assert {t["task_id"]: t["task_group"] for t in body["tasks"]} == {
        "start": None, "outer.a": "outer", "outer.inner.b": "outer.inner", "end": None}
    assert body["task_groups"] == [
        {"group_id": "outer", "label": "outer", "parent": None, "tooltip": "Outer things",
         "ui_color": "CornflowerBlue", "ui_fgcolor": "#000"},
        {"group_id": "outer.inner", "label": "inner", "parent": "outer", "tooltip": "",
         "ui_color": "CornflowerBlue", "ui_fgcolor": "#000"},
    ]
    deps = {(d["source"], d["target"]): d["label"] for d in body["dependencies"]}
    assert deps == {("start", "outer.a"): "begin", ("start", "outer.inner.b"): "begin",
                    ("outer.a", "end"): None, ("outer.inner.b", "end"): None}


def test_grid_rows_carry_their_group(client: TestClient, engine: Engine) -> None:
    serialized = store_dag(engine, _grouped_dag())
    add_runs(engine, serialized, ["r1"])
    grid = client.get("/api/v1/dags/grouped/grid").json()
    assert {r["task_id"]: r["task_group"] for r in grid["rows"]} == {
        "start": None, "outer.a": "outer", "outer.inner.b": "outer.inner", "end": None}
    assert [g["group_id"] for g in grid["task_groups"]] == ["outer", "outer.inner"]


def test_grid_groups_summarize_their_tasks_per_run(client: TestClient, engine: Engine) -> None:
    from statewright.sdk import PythonOperator

    def fail() -> None:
        raise ValueError("boom")

    with DAG("grouped_run") as dag:
        with TaskGroup("outer"):
            NoopOperator(task_id="a")
            with TaskGroup("inner"):
                PythonOperator(task_id="b", python_callable=fail)
                NoopOperator(task_id="c")
        with TaskGroup("fine"):
            NoopOperator(task_id="d")
    dag.test(engine=engine)
    grid = client.get("/api/v1/dags/grouped_run/grid").json()
    cells = {g["group_id"]: g["instances"][0] for g in grid["task_groups"]}
    assert cells["outer.inner"] == {"state": "failed", "counts": {"failed": 1, "success": 1}}
    assert cells["outer"] == {"state": "failed", "counts": {"failed": 1, "success": 2}}
    assert cells["fine"] == {"state": "success", "counts": {"success": 1}}
    assert [g["parent"] for g in grid["task_groups"]] == [None, "outer", None]
