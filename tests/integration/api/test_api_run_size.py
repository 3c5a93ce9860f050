"""A run bigger than ``max_tis_per_run`` is refused at trigger time, and nothing is created."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from api_helpers import chain_dag, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine


@pytest.fixture
def dag_id(engine: Engine) -> str:
    store_dag(engine, chain_dag("three", 3))
    return "three"


def test_a_run_over_the_limit_is_422_and_creates_nothing(
        client: TestClient, dag_id: str, snapshot: Callable[[], tuple[int, int, int]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_MAX_TIS_PER_RUN", "2")
    before = snapshot()
    res = client.post(f"/api/v1/dags/{dag_id}/dagRuns", json={"dag_run_id": "big"})
    assert res.status_code == 422, res.text
    detail = res.json()["detail"]
    assert "has 3 tasks, more than the 2 task instances a run may have" in detail
    assert "STATEWRIGHT_MAX_TIS_PER_RUN" in detail and "Nothing was created" in detail
    assert snapshot() == before


def test_a_run_at_the_limit_is_created(client: TestClient, dag_id: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_MAX_TIS_PER_RUN", "3")
    assert client.post(f"/api/v1/dags/{dag_id}/dagRuns",
                       json={"dag_run_id": "fits"}).status_code == 200
