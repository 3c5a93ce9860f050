"""The REST API addresses a mapped task's instances by map index: detail, history, results,
logs (under ``map_index=N/``), clear and mark; ``listMapped`` lists them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.config import Settings
from statewright.sdk import DAG, task

BASE = "/api/v1/dags/mapped_api/dagRuns/{run}/taskInstances"


def _run(engine: Engine, settings: Settings) -> str:
    with DAG("mapped_api") as dag:
        @task
        def square(x: int) -> int:
            print(f"squaring {x}")
            return x * x

        @task
        def total(values: Any) -> int:
            return sum(values)

        total(square.expand(x=[1, 2, 3]))
    result = dag.test(engine=engine, logs_folder=settings.logs_folder)
    assert result.state.value == "success"
    return result.run_id


def test_mapped_instances_are_listed_and_read_by_map_index(
        client: TestClient, engine: Engine, settings: Settings) -> None:
    run = _run(engine, settings)
    base = BASE.format(run=run)
    listed = client.get(f"{base}/square/listMapped").json()
    assert listed["total_entries"] == 3
    assert [t["map_index"] for t in listed["task_instances"]] == [0, 1, 2]
    everything = client.get(base).json()["task_instances"]
    assert sorted((t["task_id"], t["map_index"]) for t in everything) == [
        ("square", 0), ("square", 1), ("square", 2), ("total", -1)]

    one = client.get(f"{base}/square/2").json()
    assert (one["map_index"], one["state"]) == (2, "success")
    assert one["tries"][0]["log_url"].endswith("/square/2/logs/1")
    xcom = client.get(f"{base}/square/2/xcomEntries").json()["xcom_entries"]
    assert xcom[0]["value"] == 9
    history = client.get(f"{base}/square/1/history").json()["transitions"]
    assert {h["map_index"] for h in history} == {1}
    log = client.get(f"{base}/square/1/logs/1").json()
    assert "squaring 2" in log["content"]
    assert list(Path(settings.logs_folder).glob("**/task_id=square/map_index=1/attempt=1.log"))
    assert client.get(f"{base}/total").json()["map_index"] == -1


def test_a_mapped_task_without_its_map_index_says_how_to_address_it(
        client: TestClient, engine: Engine, settings: Settings) -> None:
    base = BASE.format(run=_run(engine, settings))
    missing = client.get(f"{base}/square")
    assert missing.status_code == 404
    assert "is mapped" in missing.text and "listMapped" in missing.text
    assert client.get(f"{base}/square/7").status_code == 404


def test_clear_and_mark_take_the_map_index(
        client: TestClient, engine: Engine, settings: Settings) -> None:
    base = BASE.format(run=_run(engine, settings))
    cleared = client.post(f"{base}/square/1/clear", json={"dry_run": True}).json()
    assert [(c["task_id"], c["map_index"]) for c in cleared["changes"]] == [("square", 1)]
    assert any("task square[1]:" in line for line in cleared["description"])
    marked = client.patch(f"{base}/square/0", json={"new_state": "failed"}).json()
    assert (marked["map_index"], marked["state"]) == (0, "failed")
    states = [t["state"] for t in client.get(f"{base}/square/listMapped").json()[
        "task_instances"]]
    assert states == ["failed", "success", "success"]


def test_the_grid_shows_a_mapped_task_as_one_row_with_a_count_and_a_summary(
        client: TestClient, engine: Engine, settings: Settings) -> None:
    _run(engine, settings)
    grid = client.get("/api/v1/dags/mapped_api/grid").json()
    rows = {r["task_id"]: r for r in grid["rows"]}
    assert list(rows) == ["square", "total"]
    assert rows["square"]["is_mapped"] and not rows["total"]["is_mapped"]
    [cell] = rows["square"]["instances"]
    assert (cell["state"], cell["map_count"], cell["state_counts"]) == (
        "success", 3, {"success": 3})
    assert rows["total"]["instances"][0]["map_count"] is None


def test_the_task_instance_page_takes_the_map_index(
        client: TestClient, engine: Engine, settings: Settings) -> None:
    run = _run(engine, settings)
    page = client.get(f"/dags/mapped_api/runs/{run}/tasks/square?map_index=1")
    assert page.status_code == 200 and re.search(r'"map_index": ?1\b', page.text)
    assert client.get(f"/dags/mapped_api/runs/{run}/tasks/square").status_code == 404
