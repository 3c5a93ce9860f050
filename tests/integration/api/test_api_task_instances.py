"""The REST API's task instances: list, detail with tries, state history, per-try logs."""

from __future__ import annotations

from pathlib import Path

from api_helpers import run_url
from fastapi.testclient import TestClient
from sqlalchemy import Engine, update

from statewright.db.engine import transaction
from statewright.db.tables import task_instance_history


def test_task_instances_of_a_run_in_dag_order(client: TestClient,
                                              failed_run: tuple[str, str]) -> None:
    dag_id, run_id = failed_run
    body = client.get(run_url(dag_id, run_id) + "/taskInstances").json()
    assert body["total_entries"] == 3
    by_task = {t["task_id"]: t for t in body["task_instances"]}
    assert body["task_instances"][0]["task_id"] == "extract"
    assert by_task["extract"]["state"] == "failed"
    assert by_task["extract"]["try_number"] == 2
    assert "null values" in by_task["extract"]["state_message"]
    assert by_task["load"]["state"] == "upstream_failed"
    assert by_task["cleanup"]["state"] == "success"


def test_task_instance_detail_lists_every_try(client: TestClient,
                                              failed_run: tuple[str, str]) -> None:
    dag_id, run_id = failed_run
    ti = client.get(run_url(dag_id, run_id) + "/taskInstances/extract").json()
    assert ti["state"] == "failed" and ti["state_name"] == "Failed"
    assert [(t["try_number"], t["state"]) for t in ti["tries"]] == [
        (1, "up_for_retry"), (2, "failed")]
    assert ti["tries"][0]["state_name"] == "AwaitingRetry"
    assert "ValueError" in (ti["tries"][1]["traceback"] or "")
    assert ti["tries"][1]["log_url"].endswith("/taskInstances/extract/logs/2")
    untried = client.get(run_url(dag_id, run_id) + "/taskInstances/load").json()
    assert untried["tries"] == [] and untried["try_number"] == 0


def test_history_tells_from_to_name_actor_and_try(client: TestClient,
                                                  failed_run: tuple[str, str]) -> None:
    dag_id, run_id = failed_run
    body = client.get(run_url(dag_id, run_id) + "/taskInstances/extract/history").json()
    steps = [(h["from_state"], h["to_state"], h["name"], h["actor"], h["try_number"])
             for h in body["transitions"]]
    assert steps[0] == (None, "none", "Pending", "user", 0)
    assert ("running", "up_for_retry", "AwaitingRetry", "worker", 1) in steps
    assert ("queued", "running", "Retrying", "executor", 2) in steps
    assert steps[-1] == ("running", "failed", "Failed", "worker", 2)
    last = body["transitions"][-1]
    assert "null values" in last["message"] and last["at"].endswith("Z")
    assert body["total_entries"] == len(steps)


def test_logs_of_each_try(client: TestClient, failed_run: tuple[str, str]) -> None:
    dag_id, run_id = failed_run
    base = run_url(dag_id, run_id) + "/taskInstances/extract/logs"
    for try_number in (1, 2):
        log = client.get(f"{base}/{try_number}").json()
        assert log["try_number"] == try_number and not log["truncated"]
        assert "about to read the orders" in log["content"]
        assert f"attempt={try_number}.log" in log["path"]
    text = client.get(f"{base}/2", headers={"Accept": "text/plain"})
    assert text.headers["content-type"].startswith("text/plain")
    assert "about to read the orders" in text.text
    tail = client.get(f"{base}/1", params={"max_bytes": 10}).json()
    assert tail["truncated"] and len(tail["content"]) <= 10


def test_log_path_comes_from_the_history_row(client: TestClient, engine: Engine,
                                             failed_run: tuple[str, str],
                                             tmp_path: Path) -> None:
    dag_id, run_id = failed_run
    moved = tmp_path / "elsewhere.log"
    moved.write_text("a log kept elsewhere\n")
    with transaction(engine) as conn:
        conn.execute(update(task_instance_history)
                     .where(task_instance_history.c.try_number == 1)
                     .values(log_path=str(moved)))
    log = client.get(run_url(dag_id, run_id) + "/taskInstances/extract/logs/1").json()
    assert log["content"] == "a log kept elsewhere\n" and log["path"] == "elsewhere.log"


def test_missing_tries_and_logs_are_404(client: TestClient, failed_run: tuple[str, str],
                                        settings: object) -> None:
    dag_id, run_id = failed_run
    base = run_url(dag_id, run_id) + "/taskInstances"
    res = client.get(f"{base}/extract/logs/3")
    assert res.status_code == 404 and "its tries are 1 to 2" in res.json()["detail"]
    res = client.get(f"{base}/load/logs/1")
    assert res.status_code == 404 and "not started a try" in res.json()["detail"]
    assert client.get(f"{base}/extract/logs/0").status_code == 404
    assert client.get(f"{base}/extract/logs/one").status_code == 422


def test_missing_log_file_is_404_naming_the_path(client: TestClient, engine: Engine,
                                                 failed_run: tuple[str, str]) -> None:
    dag_id, run_id = failed_run
    with transaction(engine) as conn:
        conn.execute(update(task_instance_history).values(log_path="/nowhere/attempt.log"))
    res = client.get(run_url(dag_id, run_id) + "/taskInstances/extract/logs/1")
    assert res.status_code == 404 and "attempt.log" in res.json()["detail"]
    assert "/nowhere" not in res.json()["detail"]  # never the server's absolute path


def test_unknown_task_is_404(client: TestClient, failed_run: tuple[str, str]) -> None:
    dag_id, run_id = failed_run
    base = run_url(dag_id, run_id) + "/taskInstances/nope"
    for url in (base, base + "/history", base + "/logs/1"):
        res = client.get(url)
        assert res.status_code == 404, url
        assert "has no task 'nope'" in res.json()["detail"]


def test_xcom_entries_of_a_task_instance(client: TestClient,
                                         failed_run: tuple[str, str]) -> None:
    dag_id, run_id = failed_run
    # extract failed (it stored nothing); the others returned nothing.
    empty = client.get(run_url(dag_id, run_id) + "/taskInstances/extract/xcomEntries")
    assert empty.status_code == 200 and empty.json() == {"xcom_entries": [],
                                                          "total_entries": 0}
    missing = client.get(run_url(dag_id, run_id) + "/taskInstances/nope/xcomEntries")
    assert missing.status_code == 404 and "nope" in missing.json()["detail"]
