"""The grid and the task instance API with a mapped task group: each task of the group is one
row with a count, its instances addressed by map index."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.config import Settings
from statewright.sdk import DAG, task, task_group


def _run(engine: Engine, settings: Settings) -> str:
    with DAG("mg_api") as dag:
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
        def total(values: Any) -> int:
            return sum(values)

        total(group.expand(x=[1, 2, 3]))
    result = dag.test(engine=engine, logs_folder=settings.logs_folder)
    assert result.state.value == "success"
    return result.run_id


def test_the_grid_shows_each_task_of_a_mapped_group_as_one_row_with_a_count(
        client: TestClient, engine: Engine, settings: Settings) -> None:
    run = _run(engine, settings)
    grid = client.get("/api/v1/dags/mg_api/grid").json()
    rows = {r["task_id"]: r for r in grid["rows"]}
    for tid in ("group.add_one", "group.double"):
        assert rows[tid]["is_mapped"]
        [cell] = rows[tid]["instances"]
        assert (cell["state"], cell["map_count"]) == ("success", 3)
    assert not rows["total"]["is_mapped"]
    base = f"/api/v1/dags/mg_api/dagRuns/{run}/taskInstances"
    listed = client.get(f"{base}/group.double/listMapped").json()
    assert listed["total_entries"] == 3
    one = client.get(f"{base}/group.double/1").json()
    assert (one["map_index"], one["state"]) == (1, "success")


def test_clearing_one_instance_with_downstream_clears_the_same_index_in_the_group(
        client: TestClient, engine: Engine, settings: Settings) -> None:
    run = _run(engine, settings)
    base = f"/api/v1/dags/mg_api/dagRuns/{run}/taskInstances"
    cleared = client.post(f"{base}/group.add_one/1/clear",
                          json={"dry_run": True, "include_downstream": True}).json()
    changed = {(c["task_id"], c["map_index"]) for c in cleared["changes"]}
    assert {("group.add_one", 1), ("group.double", 1)} <= changed
    assert not changed & {("group.add_one", 0), ("group.double", 0), ("group.double", 2)}
