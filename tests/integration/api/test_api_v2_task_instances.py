"""/api/v2's task instance family beyond the lists: mapped instances (``listMapped``), marking
with its dry run, a try's log as JSON or text, XCom entries written by hand, a DAG's tasks,
deleting a finished run (an unfinished one refused) and deleting a DAG (refused with why)."""

from __future__ import annotations

import pytest
from api_helpers import add_runs, chain_dag, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from test_api_v2_client import _mapped_run

from statewright.config import Settings

V2 = "/api/v2/dags"


@pytest.fixture
def run_id(engine: Engine, settings: Settings) -> str:
    add_runs(engine, store_dag(engine, chain_dag("chain", 2)), ["q1"])
    return _mapped_run(engine, settings.logs_folder)


def test_mapped_instances_and_marking_with_its_dry_run(client: TestClient, run_id: str) -> None:
    base = f"{V2}/mapped_v2/dagRuns/{run_id}/taskInstances/square"
    mapped = client.get(base + "/listMapped", params={"order_by": "-map_index", "limit": 2})
    assert mapped.status_code == 200, mapped.text
    assert mapped.json()["total_entries"] == 3
    assert [t["map_index"] for t in mapped.json()["task_instances"]] == [2, 1]
    assert client.get(base + "/listMapped", params={"map_index": 0}).json()[
        "total_entries"] == 1
    assert client.get(base + "/listMapped", params={"version_number": 1}).status_code == 400
    preview = client.patch(base + "/1/dry_run", json={"new_state": "failed"})
    assert preview.status_code == 200, preview.text
    assert [(t["map_index"], t["state"]) for t in preview.json()["task_instances"]] == [
        (1, "success")]  # what would change, unchanged
    downstream = client.patch(base + "/dry_run", json={"new_state": "failed",
                                                      "include_downstream": True})
    assert sorted((t["task_id"], t["map_index"]) for t in downstream.json()["task_instances"]
                  ) == [("square", 0), ("square", 1), ("square", 2), ("total", -1)]
    assert client.get(base + "/1").json()["state"] == "success"
    marked = client.patch(base + "/1", json={"new_state": "failed"})
    assert [(t["map_index"], t["state"], t["statewright_state"])
            for t in marked.json()["task_instances"]] == [(1, "failed", "failed")]
    assert client.patch(base + "/1", json={"new_state": "queued"}).status_code == 400


def test_a_tries_log_as_json_or_text(client: TestClient, run_id: str) -> None:
    url = f"{V2}/mapped_v2/dagRuns/{run_id}/taskInstances/square/logs/1"
    as_json = client.get(url, params={"map_index": 2})
    assert as_json.status_code == 200, as_json.text
    assert any("squaring 3" in m["event"] for m in as_json.json()["content"])
    as_text = client.get(url, params={"map_index": 2, "full_content": True},
                         headers={"Accept": "text/plain"})
    assert as_text.headers["content-type"].startswith("text/plain")
    assert "squaring 3" in as_text.text
    assert client.get(url.replace("/1", "/5"), params={"map_index": 2}).status_code == 404
    assert client.get(url, params={"token": "x"}).status_code == 400


def test_xcom_entries_written_by_hand(client: TestClient, run_id: str) -> None:
    entries = f"{V2}/mapped_v2/dagRuns/{run_id}/taskInstances/total/xcomEntries"
    made = client.post(entries, json={"key": "rows", "value": {"n": 3}})
    assert made.status_code == 201, made.text
    assert (made.json()["key"], made.json()["value"]) == ("rows", {"n": 3})
    assert client.post(entries, json={"key": "rows", "value": 1}).status_code == 409
    changed = client.patch(entries + "/rows", json={"value": [1, 2]})
    assert changed.status_code == 200 and changed.json()["value"] == [1, 2]
    assert client.get(entries + "/rows").json()["value"] == [1, 2]
    assert client.patch(entries + "/nope", json={"value": 1}).status_code == 404
    assert client.delete(entries + "/rows").status_code == 204
    assert client.get(entries + "/rows").status_code == 404
    assert client.delete(entries + "/rows").status_code == 404
    mapped = f"{V2}/mapped_v2/dagRuns/{run_id}/taskInstances/square/xcomEntries"
    assert client.post(mapped, json={"key": "k", "value": "v", "map_index": 1}
                       ).status_code == 201
    assert client.get(mapped + "/k", params={"map_index": 1}).json()["value"] == "v"
    assert client.post(mapped, json={"key": "k", "value": "v", "map_index": 9}
                       ).status_code == 404


def test_a_dags_tasks(client: TestClient, run_id: str) -> None:
    tasks = client.get(f"{V2}/mapped_v2/tasks")
    assert tasks.status_code == 200, tasks.text
    assert [t["task_id"] for t in tasks.json()["tasks"]] == ["square", "total"]
    square = client.get(f"{V2}/mapped_v2/tasks/square").json()
    assert (square["is_mapped"], square["retries"], square["downstream_task_ids"]) == (
        True, 0, ["total"])
    assert square["retry_delay"]["__type"] == "TimeDelta"
    backwards = client.get(f"{V2}/mapped_v2/tasks", params={"order_by": "-task_id"}).json()
    assert [t["task_id"] for t in backwards["tasks"]] == ["total", "square"]
    assert client.get(f"{V2}/mapped_v2/tasks", params={"order_by": "colour"}).status_code == 400
    assert client.get(f"{V2}/mapped_v2/tasks/nope").status_code == 404
    assert client.get(f"{V2}/nope/tasks").status_code == 404


def test_deleting_runs_and_dags(client: TestClient, run_id: str) -> None:
    unfinished = client.delete(f"{V2}/chain/dagRuns/q1")
    assert unfinished.status_code == 409 and "queued" in unfinished.json()["detail"]
    assert client.delete(f"{V2}/mapped_v2/dagRuns/{run_id}").status_code == 204
    assert client.get(f"{V2}/mapped_v2/dagRuns/{run_id}").status_code == 404
    assert client.get(f"{V2}/~/dagRuns/~/taskInstances", params={"dag_id_pattern": "mapped_v2"}
                      ).json()["total_entries"] == 0
    assert client.delete(f"{V2}/mapped_v2/dagRuns/{run_id}").status_code == 404
    refused = client.delete(f"{V2}/mapped_v2")
    assert refused.status_code == 400 and "DAGs folder" in refused.json()["detail"]
    assert client.delete(f"{V2}/nope").status_code == 404
