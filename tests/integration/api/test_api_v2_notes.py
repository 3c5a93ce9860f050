"""Notes on DAG runs and task instances: set by PATCH with ``update_mask=note`` under /api/v2
(operators and admins; viewers refused), shown in every run and task instance answer, at most
1000 characters, recorded in the audit log, and their history (who, when, what) under
/api/v1's ``noteHistory``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from api_helpers import add_runs, chain_dag, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.config import Settings
from statewright.db.repositories import audit as audit_repo
from statewright.sdk import DAG, task

V2 = "/api/v2/dags"
V1 = "/api/v1/dags"


def _mapped() -> DAG:
    with DAG("mapped_notes") as dag:
        @task
        def square(x: int) -> int:
            return x * x

        square.expand(x=[1, 2, 3])
    return dag


@pytest.fixture
def run_id(engine: Engine, settings: Settings) -> str:
    add_runs(engine, store_dag(engine, chain_dag("chain", 2)), ["r1"])
    result = _mapped().test(engine=engine, logs_folder=settings.logs_folder)
    return result.run_id


def _patch(client: TestClient, url: str, body: dict[str, Any], headers: dict[str, str],
           **params: Any) -> Any:
    return client.patch(url, json=body, params=params, headers=headers)


def test_a_runs_note_is_written_shown_and_kept_with_its_history(
        client: TestClient, engine: Engine, run_id: str,
        auth_headers: Callable[..., dict[str, str]]) -> None:
    operator = auth_headers(engine, "olga", "operator")
    url = f"{V2}/chain/dagRuns/r1"
    first = _patch(client, url, {"note": "waiting on the vendor"}, operator,
                   update_mask="note")
    assert first.status_code == 200, first.text
    assert (first.json()["note"], first.json()["state"]) == ("waiting on the vendor", "queued")
    _patch(client, url, {"note": "vendor answered", "state": "failed"}, operator,
           update_mask="note")  # the mask leaves the state alone
    shown = client.get(url).json()
    assert (shown["note"], shown["state"]) == ("vendor answered", "queued")
    listed = client.get(f"{V2}/~/dagRuns").json()["dag_runs"]
    assert {r["dag_id"]: r["note"] for r in listed} == {"chain": "vendor answered",
                                                          "mapped_notes": None}
    assert _patch(client, url, {"note": None}, operator).json()["note"] is None
    history = client.get(f"{V1}/chain/dagRuns/r1/noteHistory").json()
    assert history["total_entries"] == 3
    assert [(n["content"], n["username"]) for n in history["notes"]] == [
        ("waiting on the vendor", "olga"), ("vendor answered", "olga"), (None, "olga")]
    with engine.connect() as conn:
        rows, _ = audit_repo.page(conn, limit=10, offset=0, dag_id="chain")
    assert [r.detail for r in rows if r.action == "patch_dag_run"][-1] == (
        "note of run r1: 'waiting on the vendor'")


def test_notes_are_refused_beyond_1000_characters_and_to_viewers(
        client: TestClient, engine: Engine, run_id: str,
        auth_headers: Callable[..., dict[str, str]]) -> None:
    url = f"{V2}/chain/dagRuns/r1"
    assert _patch(client, url, {"note": "x" * 1001}, {}).status_code == 422
    assert _patch(client, url, {"note": "x" * 1000}, {}).status_code == 200
    viewer = auth_headers(engine, "vera", "viewer")
    assert _patch(client, url, {"note": "mine"}, viewer).status_code == 403
    wrong = _patch(client, url, {"note": "y"}, {}, update_mask="colour")
    assert wrong.status_code == 400 and "colour" in wrong.json()["detail"]
    assert client.get(url).json()["note"] == "x" * 1000
    assert client.get(f"{V1}/chain/dagRuns/nope/noteHistory").status_code == 404


def test_a_note_given_at_trigger_is_the_runs_note(client: TestClient, run_id: str) -> None:
    made = client.post(f"{V2}/chain/dagRuns", json={"dag_run_id": "noted", "note": "by hand"})
    assert made.status_code == 200, made.text
    assert made.json()["note"] == "by hand"
    assert client.get(f"{V1}/chain/dagRuns/noted/noteHistory").json()["notes"][0][
        "username"] == "admin"


def test_task_instance_notes(client: TestClient, engine: Engine, run_id: str,
                             auth_headers: Callable[..., dict[str, str]]) -> None:
    ti = f"{V2}/mapped_notes/dagRuns/{run_id}/taskInstances/square"
    preview = client.patch(ti + "/dry_run", json={"note": "would"})
    assert preview.status_code == 200, preview.text
    assert [(t["map_index"], t["note"]) for t in preview.json()["task_instances"]] == [
        (0, None), (1, None), (2, None)]  # a dry run writes nothing
    every = client.patch(ti, json={"note": "all three"}, params={"update_mask": "note"})
    assert [(t["map_index"], t["note"]) for t in every.json()["task_instances"]] == [
        (0, "all three"), (1, "all three"), (2, "all three")]
    operator = auth_headers(engine, "olga", "operator")
    one = client.patch(ti + "/1", json={"note": "just one"}, headers=operator)
    assert [(t["map_index"], t["note"], t["state"]) for t in one.json()["task_instances"]] == [
        (1, "just one", "success")]
    assert client.get(ti + "/1").json()["note"] == "just one"
    listed = client.get(f"{V2}/~/dagRuns/~/taskInstances", params={"task_id": "square"})
    assert [t["note"] for t in listed.json()["task_instances"]] == [
        "all three", "just one", "all three"]
    history = client.get(f"{V1}/mapped_notes/dagRuns/{run_id}/taskInstances/square/1/"
                         "noteHistory").json()
    assert [(n["content"], n["username"]) for n in history["notes"]] == [
        ("all three", "admin"), ("just one", "olga")]
    assert client.get(f"{V1}/mapped_notes/dagRuns/{run_id}/taskInstances/square/7/"
                      "noteHistory").status_code == 404
