"""Input limits at the API's edge: depth, items and size of every JSON body and of the values a
route stores (conf, a paused flow's input, HITL responses, a backfill's conf), each a 422
naming its setting; a run stored with a conf too deep to answer is listed with an error instead
of a 500 for the whole list. On SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from api_helpers import chain_dag, counts, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine, update

from statewright.api import create_app
from statewright.config import load_settings
from statewright.db.engine import transaction
from statewright.db.tables import dag_run


def deep(levels: int) -> Any:
    """A list nested ``levels`` levels deep."""
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.fixture
def dag_id(engine: Engine) -> str:
    store_dag(engine, chain_dag("pipeline", 2))
    return "pipeline"


def _trigger(client: TestClient, dag_id: str, conf: Any) -> Any:
    return client.post(f"/api/v1/dags/{dag_id}/dagRuns", json={"conf": conf})


def test_a_conf_nested_500_deep_is_422_naming_the_depth_limit_and_creates_nothing(
        client: TestClient, dag_id: str, engine: Engine) -> None:
    before = counts(engine)
    res = _trigger(client, dag_id, {"a": deep(500)})
    assert res.status_code == 422, res.text
    assert "STATEWRIGHT_MAX_INPUT_DEPTH" in res.json()["detail"]
    assert "64 levels" in res.json()["detail"]
    assert counts(engine) == before
    assert client.get(f"/api/v1/dags/{dag_id}/dagRuns").status_code == 200


def test_depth_items_and_size_each_get_a_422_naming_their_setting(
        engine: Engine, tmp_path: Path, dag_id: str,
        auth_headers: Any) -> None:
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home"),
                              "STATEWRIGHT_MAX_INPUT_DEPTH": "5",
                              "STATEWRIGHT_MAX_INPUT_ITEMS": "50",
                              "STATEWRIGHT_MAX_INPUT_BYTES": "2000",
                              "STATEWRIGHT_API_MAX_BODY_BYTES": "100000"})
    before = counts(engine)
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine)) as c:
        cases = {
            "STATEWRIGHT_MAX_INPUT_DEPTH": {"a": deep(6)},
            "STATEWRIGHT_MAX_INPUT_ITEMS": {"a": list(range(60))},
            "STATEWRIGHT_MAX_INPUT_BYTES": {"a": "x" * 3000},
        }
        for setting, conf in cases.items():
            res = _trigger(c, dag_id, conf)
            assert res.status_code == 422, (setting, res.text)
            assert setting in res.json()["detail"], (setting, res.text)
        assert counts(engine) == before
        # Within the limits: accepted.
        ok = _trigger(c, dag_id, {"a": deep(2), "b": list(range(10))})
        assert ok.status_code == 200, ok.text
        # Any JSON body is checked before a route reads it (here one no route would accept).
        res = c.post("/api/v1/pools", json={"name": "p", "slots": 1, "x": deep(40)})
        assert res.status_code == 422 and "STATEWRIGHT_MAX_INPUT_DEPTH" in res.text
        res = c.post("/api/v1/pools", content=b"[" * 50_000, headers={
            "content-type": "application/json"})
        assert res.status_code == 422 and "STATEWRIGHT_MAX_INPUT_DEPTH" in res.text
        # Brackets inside strings are text, not nesting.
        res = c.post("/api/v1/dags/pipeline/dagRuns", json={"conf": {"s": "[[[[[[[[[["}})
        assert res.status_code == 200, res.text


def test_a_backfill_conf_and_a_flow_input_are_checked_by_size_too(
        engine: Engine, tmp_path: Path, dag_id: str, auth_headers: Any) -> None:
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home"),
                              "STATEWRIGHT_MAX_INPUT_BYTES": "200"})
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine)) as c:
        res = c.post("/api/v1/backfills", json={
            "dag_id": dag_id, "from_date": "2026-01-01T00:00:00Z",
            "to_date": "2026-01-02T00:00:00Z", "dag_run_conf": {"k": "x" * 300}})
        assert res.status_code == 422, res.text
        assert "dag_run_conf is" in res.json()["detail"]
        assert "STATEWRIGHT_MAX_INPUT_BYTES" in res.json()["detail"]
        res = c.patch("/api/v1/dags/pipeline/dagRuns/nope", json={
            "state": "running", "input": {"k": "x" * 300}})
        assert res.status_code == 422 and "input is" in res.json()["detail"]


def test_a_run_stored_with_a_conf_too_deep_to_answer_is_listed_with_an_error(
        client: TestClient, dag_id: str, engine: Engine) -> None:
    """Runs stored before the limits (or by a path that skipped them) never break the list."""
    assert _trigger(client, dag_id, {}).status_code == 200
    ok = _trigger(client, dag_id, {"fine": 1}).json()["dag_run_id"]
    bad = client.get(f"/api/v1/dags/{dag_id}/dagRuns").json()["dag_runs"][1]["dag_run_id"]
    with transaction(engine) as conn:
        conn.execute(update(dag_run).where(dag_run.c.run_id == bad)
                     .values(conf={"a": deep(500)}))
    res = client.get(f"/api/v1/dags/{dag_id}/dagRuns")
    assert res.status_code == 200, res.text[:500]
    runs = {r["dag_run_id"]: r for r in res.json()["dag_runs"]}
    assert runs[ok]["conf"] == {"fine": 1} and runs[ok]["read_error"] is None
    assert runs[bad]["conf"] == {}
    assert "cannot be shown whole" in runs[bad]["read_error"]
    one = client.get(f"/api/v1/dags/{dag_id}/dagRuns/{bad}")
    assert one.status_code == 200 and one.json()["read_error"]


def test_a_hitl_response_past_the_limits_is_422_and_writes_nothing(
        engine: Engine, tmp_path: Path, auth_headers: Any) -> None:
    from tests.hitl_helpers import drive

    from statewright.db.repositories import hitl as hitl_repo
    from statewright.sdk import DAG, HITLEntryOperator, Param

    with DAG("hitl_limits") as dag:
        HITLEntryOperator(task_id="form", subject="Fill",
                          params={"note": Param("", type="string")})
    d = drive(engine, dag, tmp_path)
    d.settle()
    url = f"/api/v1/dags/hitl_limits/dagRuns/{d.run_id}/taskInstances/form/hitlDetails"
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home"),
                              "STATEWRIGHT_MAX_INPUT_BYTES": "200"})
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine)) as c:
        res = c.patch(url, json={"chosen_options": ["OK"], "params_input": {"note": "x" * 300}})
        assert res.status_code == 422, res.text
        assert "params_input is" in res.json()["detail"]
        assert "STATEWRIGHT_MAX_INPUT_BYTES" in res.json()["detail"]
        res = c.patch(url, json={"chosen_options": ["OK"], "params_input": {"note": deep(70)}})
        assert res.status_code == 422 and "STATEWRIGHT_MAX_INPUT_DEPTH" in res.text
    with engine.connect() as conn:
        assert hitl_repo.get(conn, d.ti("form").id).responded_at is None
    assert d.states()["form"] == "awaiting_input"
