"""Assets through the REST API and the CLI: lists, events, the graph, a DAG's pending
condition, a run's triggering events; an event for an unknown asset is refused."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, select
from tests.cli_helpers import cli_uses_engine
from tests.noop import NoopOperator

from statewright.api import create_app
from statewright.cli.main import cli
from statewright.config import load_settings
from statewright.db.tables_assets import asset_event
from statewright.sdk import DAG, Asset

A, B = Asset("s3://b/a"), Asset(name="b", uri="s3://b/b")


@pytest.fixture
def client(engine: Engine, tmp_path: Path,
           auth_headers: Callable[..., dict[str, str]]) -> Iterator[TestClient]:
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home")})
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine, "operator", "operator")) as c:
        yield c


@pytest.fixture
def synced(assets_harness: Callable) -> Any:
    h = assets_harness()
    with DAG("producer", schedule=None) as p:
        NoopOperator(task_id="write", outlets=[A])
    with DAG("consumer", schedule=A & B) as c:
        NoopOperator(task_id="read")
    h.sync(p, c)
    return h


def _count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(asset_event)).scalar() or 0)


def test_assets_list_with_producers_and_consumers(client: TestClient, synced: Any) -> None:
    body = client.get("/api/v1/assets").json()
    by_name = {a["name"]: a for a in body["assets"]}
    assert by_name["s3://b/a"]["producing_tasks"] == [{"dag_id": "producer", "task_id": "write"}]
    assert by_name["s3://b/a"]["consuming_dags"] == ["consumer"]
    assert by_name["b"]["uri"] == "s3://b/b" and by_name["b"]["events"] == 0
    assert client.get("/api/v1/dags/consumer").json()["schedule"] == "Asset: s3://b/a & b"
    graph = client.get("/api/v1/assets/graph").json()
    assert {"source": "dag:producer", "target": "asset:s3://b/a"} in graph["edges"]
    assert {"source": "asset:b", "target": "dag:consumer"} in graph["edges"]


def test_post_an_event_then_the_pending_condition_and_the_triggered_run(
        client: TestClient, synced: Any) -> None:
    pending = client.get("/api/v1/dags/consumer/assets").json()
    assert pending["summary"] == "s3://b/a & b" and pending["pending"]["ready"] is False
    r = client.post("/api/v1/assets/events", json={"uri": "s3://b/b", "extra": {"rows": 3}})
    assert r.status_code == 200, r.text
    assert r.json()["asset"]["name"] == "b" and r.json()["source"] == "api"
    pending = client.get("/api/v1/dags/consumer/assets").json()["pending"]
    assert pending == {"all": [{"asset": {"name": "s3://b/a", "uri": "s3://b/a"}, "ready": False},
                               {"asset": {"name": "b", "uri": "s3://b/b"}, "ready": True}],
                       "ready": False}
    assert client.post("/api/v1/assets/events", json={"name": "s3://b/a"}).status_code == 200
    synced.loop()
    (run,) = synced.runs("consumer")
    events = client.get(f"/api/v1/dags/consumer/dagRuns/{run.run_id}/upstreamAssetEvents").json()
    assert [e["asset"]["name"] for e in events["asset_events"]] == ["b", "s3://b/a"]
    assert events["asset_events"][0]["extra"] == {"rows": 3}
    listed = client.get("/api/v1/assets/events", params={"asset": "b"}).json()
    assert listed["total_entries"] == 1


def test_an_event_for_an_unknown_asset_is_refused(client: TestClient, synced: Any,
                                                  engine: Engine) -> None:
    r = client.post("/api/v1/assets/events", json={"uri": "s3://nope/x"})
    assert r.status_code == 404
    assert "s3://nope/x" in r.json()["detail"] and "Nothing was recorded" in r.json()["detail"]
    assert client.post("/api/v1/assets/events", json={"asset_id": 9999}).status_code == 404
    r = client.post("/api/v1/assets/events", json={"name": "b", "uri": "s3://b/b"})
    assert r.status_code == 422 and "exactly one" in r.json()["detail"]
    r = client.post("/api/v1/assets/events", json={"name": "b", "extra": [1, 2]})
    assert r.status_code == 422 and "extra" in r.json()["detail"]
    assert _count(engine) == 0


def test_cli_list_emit_events(synced: Any, engine: Engine, tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    cli_uses_engine(monkeypatch, engine)
    env = {"STATEWRIGHT_HOME": str(tmp_path / "home"),
           "STATEWRIGHT_DAGS_FOLDER": str(tmp_path), "STATEWRIGHT_DATABASE_URL": "sqlite:///x"}

    def run(*args: str) -> Any:
        return CliRunner().invoke(cli, list(args), env=env)

    r = run("assets", "emit", "s3://b/a", "--extra", '{"rows": 1}')
    assert r.exit_code == 0, r.output
    assert "recorded for s3://b/a" in r.output
    r = run("assets", "events", "-o", "json")
    (event,) = json.loads(r.output)
    assert event["extra"] == {"rows": 1} and event["source"] == "cli"
    listed = json.loads(run("assets", "list", "-o", "json").output)
    assert {a["name"]: a["events"] for a in listed} == {"b": 0, "s3://b/a": 1}
    dag = json.loads(run("assets", "dag", "consumer").output)
    assert dag["queued_events"] == ["s3://b/a"]
    # bad input: one paragraph, non-zero, nothing recorded
    r = run("assets", "emit", "s3://unknown")
    assert r.exit_code != 0 and "s3://unknown" in r.output
    r = run("assets", "emit", "s3://b/a", "--extra", "{bad")
    assert r.exit_code == 2 and "--extra is not valid JSON" in r.output
    r = run("assets", "emit", "s3://b/a", "--extra", "[1]")
    assert r.exit_code == 2 and "JSON object" in r.output
    assert _count(engine) == 1
