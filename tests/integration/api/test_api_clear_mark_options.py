"""The clear and mark options behind the UI's dialogs: only_failed, past, future, recursive on a
task instance's clear, and the mark's dry run (PATCH …/dry_run) with past and future; also on
one map index of a mapped task."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from api_helpers import failing_dag, run_url
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.config import Settings
from statewright.sdk import DAG, task


@pytest.fixture
def three_runs(engine: Engine, settings: Settings) -> list[str]:
    """Three failed runs of ``etl``, oldest first."""
    return [failing_dag().test(engine=engine, logs_folder=settings.logs_folder).run_id
            for _ in range(3)]


def _changed(plan: dict[str, object]) -> set[tuple[str, str, str]]:
    return {(c["dag_run_id"], c["task_id"], c["to_state"])  # type: ignore[index]
            for c in plan["changes"]}  # type: ignore[attr-defined]


def _states(client: TestClient, run_id: str) -> dict[str, str]:
    tis = client.get(run_url("etl", run_id) + "/taskInstances").json()["task_instances"]
    return {t["task_id"]: t["state"] for t in tis}


def test_clear_with_past_and_future_previews_every_run_and_changes_nothing(
        client: TestClient, three_runs: list[str],
        snapshot: Callable[[], tuple[int, int, int]]) -> None:
    first, middle, last = three_runs
    before = snapshot()
    url = run_url("etl", middle) + "/taskInstances/extract/clear"
    plan = client.post(url, json={"dry_run": True, "include_past": True}).json()
    assert plan["dag_run_id"] == middle and plan["applied"] is False
    assert {(r, t) for r, t, _ in _changed(plan)} == {(first, "extract"), (middle, "extract")}
    assert [rc["dag_run_id"] for rc in plan["run_changes"]] == [middle, first]
    plan = client.post(url, json={"dry_run": True, "include_future": True,
                                  "include_downstream": True}).json()
    assert {(r, t) for r, t, _ in _changed(plan)} == {
        (r, t) for r in (middle, last) for t in ("extract", "load", "cleanup")}
    assert snapshot() == before


def test_clear_only_failed_downstream_then_future_applies_in_every_run(
        client: TestClient, three_runs: list[str]) -> None:
    first, middle, last = three_runs
    url = run_url("etl", middle) + "/taskInstances/extract/clear"
    plan = client.post(url, json={"dry_run": True, "include_downstream": True,
                                  "only_failed": True}).json()
    # cleanup (all_done) succeeded: only the failed and upstream_failed ones are cleared
    assert {t for _, t, _ in _changed(plan)} == {"extract", "load"}
    res = client.post(url, json={"include_future": True, "only_failed": True})
    assert res.status_code == 200 and res.json()["applied"] is True
    assert _states(client, first) == {"extract": "failed", "load": "upstream_failed",
                                      "cleanup": "success"}
    for run_id in (middle, last):
        assert _states(client, run_id)["extract"] == "none"
        assert client.get(run_url("etl", run_id)).json()["state"] == "queued"


def test_mark_dry_run_previews_and_the_patch_applies_the_same(
        client: TestClient, three_runs: list[str],
        snapshot: Callable[[], tuple[int, int, int]]) -> None:
    first, middle, last = three_runs
    before = snapshot()
    url = run_url("etl", middle) + "/taskInstances/load"
    body = {"new_state": "success", "include_upstream": True, "include_past": True}
    plan = client.patch(url + "/dry_run", json=body).json()
    assert plan["dry_run"] is True and plan["applied"] is False
    assert _changed(plan) == {(r, t, "success") for r in (first, middle)
                              for t in ("extract", "load")}
    assert snapshot() == before
    assert client.patch(url, json=body).status_code == 200
    for run_id in (first, middle):
        assert _states(client, run_id) == {"extract": "success", "load": "success",
                                           "cleanup": "success"}
    assert _states(client, last)["extract"] == "failed"
    url = run_url("etl", last) + "/taskInstances/load/dry_run"
    plan = client.patch(url, json=body).json()
    assert {(c["dag_run_id"], c["task_id"]) for c in plan["changes"]} == {
        (last, "extract"), (last, "load")}
    assert {"task_id": "extract", "reason": "success already", "dag_run_id": first} in \
        plan["unchanged"]  # the runs done already say why they are left alone


def test_clear_and_mark_options_bad_input(client: TestClient, three_runs: list[str],
                                          snapshot: Callable[[], tuple[int, int, int]]) -> None:
    middle = three_runs[1]
    before = snapshot()
    clear = run_url("etl", middle) + "/taskInstances/extract/clear"
    res = client.post(clear, json={"include_past": "yes"})
    assert res.status_code == 422 and "include_past" in res.json()["detail"]
    res = client.post(clear, json={"recursive": 1})
    assert res.status_code == 422 and "recursive" in res.json()["detail"]
    res = client.post(clear, json={"include_sideways": True})
    assert res.status_code == 422 and "include_sideways" in res.json()["detail"]
    mark = run_url("etl", middle) + "/taskInstances/nope/dry_run"
    res = client.patch(mark, json={"new_state": "success"})
    assert res.status_code == 404 and "no task 'nope'" in res.json()["detail"]
    res = client.patch(run_url("etl", middle) + "/taskInstances/load/dry_run",
                       json={"new_state": "running"})
    assert res.status_code == 422 and "new_state" in res.json()["detail"]
    res = client.patch(run_url("etl", "nope") + "/taskInstances/load/dry_run",
                       json={"new_state": "success"})
    assert res.status_code == 404 and "has no run 'nope'" in res.json()["detail"]
    assert snapshot() == before


def test_options_on_one_map_index_of_a_mapped_task(client: TestClient, engine: Engine,
                                                   settings: Settings) -> None:
    with DAG("mapped_opts") as dag:
        @task
        def square(x: int) -> int:
            return x * x

        @task
        def total(values: list[int]) -> int:
            return sum(values)

        total(square.expand(x=[1, 2, 3]))
    runs = [dag.test(engine=engine, logs_folder=settings.logs_folder).run_id for _ in range(2)]
    base = run_url("mapped_opts", runs[1]) + "/taskInstances/square/1"
    plan = client.patch(base + "/dry_run", json={"new_state": "failed", "include_past": True,
                                                 "include_downstream": True}).json()
    assert {(c["dag_run_id"], c["task_id"], c["map_index"]) for c in plan["changes"]} == {
        (r, t, i) for r in runs for t, i in (("square", 1), ("total", -1))}
    plan = client.post(base + "/clear", json={"dry_run": True, "include_future": True}).json()
    assert [(c["dag_run_id"], c["map_index"]) for c in plan["changes"]] == [(runs[1], 1)]
