"""/api/v2's task state store and asset state store: a person sets, changes, reads and deletes
keys of a task instance and of an asset; bad keys, values and expiry times are refused with
400 and nothing changed; on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

from api_helpers import add_runs, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import task_state as state_repo
from statewright.sdk import DAG, Asset, EmptyOperator
from statewright.services.dag_processor.asset_refs import sync_dag_assets

V2 = "/api/v2"
TI = f"{V2}/dags/stateful/dagRuns/r1/taskInstances/work/state-store"


def _seed(engine: Engine) -> None:
    with DAG("stateful") as dag:
        EmptyOperator(task_id="work", outlets=[Asset(name="ledger")])
    ser = store_dag(engine, dag)
    add_runs(engine, ser, ["r1"])
    with transaction(engine) as conn:
        sync_dag_assets(conn, [ser], utcnow())


def test_task_state_store(client: TestClient, engine: Engine,
                          auth_headers: Callable[..., dict[str, str]]) -> None:
    _seed(engine)
    viewer = auth_headers(engine, "viewer", "viewer")
    assert client.put(f"{TI}/k", json={"value": 1}, headers=viewer).status_code == 403
    assert client.get(TI, headers=viewer).status_code == 200
    assert client.get(TI).json() == {"task_state_store": [], "total_entries": 0}
    assert client.put(f"{TI}/cursor", json={"value": {"page": 3}}).status_code == 204
    assert client.put(f"{TI}/forever", json={"value": 1, "expires_at": None}).status_code == 204
    listed = client.get(TI).json()
    assert [(e["key"], e["value"]) for e in listed["task_state_store"]] == [
        ("cursor", {"page": 3}), ("forever", 1)]
    with engine.connect() as conn:
        kept = {r.key: r.retention for r in state_repo.keys_of(conn, "stateful", "r1", "work")}
    assert kept == {"cursor": "run", "forever": "never_expire"}

    patched = client.patch(f"{TI}/cursor", json={"value": {"page": 4}})
    assert patched.status_code == 200 and patched.json()["value"] == {"page": 4}
    assert client.get(f"{TI}/cursor").json()["value"] == {"page": 4}
    assert client.patch(f"{TI}/nope", json={"value": 1}).status_code == 404
    assert client.get(f"{TI}/nope").status_code == 404

    timed = client.put(f"{TI}/k", json={"value": 1, "expires_at": "2030-01-01T00:00:00Z"})
    assert timed.status_code == 400 and "Nothing was changed" in timed.json()["detail"]
    big = client.put(f"{TI}/k", json={"value": "x" * 70_000})
    assert big.status_code == 400 and "'k'" in big.json()["detail"]
    assert client.get(f"{TI}/k").status_code == 404
    unknown = client.put(f"{V2}/dags/stateful/dagRuns/r1/taskInstances/ghost/state-store/k",
                         json={"value": 1})
    assert unknown.status_code == 404

    assert client.delete(f"{TI}/cursor").status_code == 204
    assert client.delete(f"{TI}/cursor").status_code == 204  # nothing to do
    assert [e["key"] for e in client.get(TI).json()["task_state_store"]] == ["forever"]
    assert client.delete(TI).status_code == 204
    assert client.get(TI).json()["total_entries"] == 0


def test_asset_state_store(client: TestClient, engine: Engine) -> None:
    _seed(engine)
    [asset] = client.get(f"{V2}/assets").json()["assets"]
    url = f"{V2}/assets/{asset['id']}/state-store"
    assert client.put(f"{url}/watermark", json={"value": "2026-01-01"}).status_code == 204
    [entry] = client.get(url).json()["asset_state_store"]
    assert (entry["key"], entry["value"], entry["last_updated_by"]) == (
        "watermark", "2026-01-01", {"kind": "api", "dag_id": None, "run_id": None,
                                    "task_id": None, "map_index": None})
    assert client.get(f"{url}/watermark").json()["value"] == "2026-01-01"
    assert client.get(f"{url}/nope").status_code == 404
    assert client.put(f"{V2}/assets/999999/state-store/k", json={"value": 1}
                      ).status_code == 404
    assert client.delete(f"{url}/watermark").status_code == 204
    assert client.get(url).json()["total_entries"] == 0
    client.put(f"{url}/a", json={"value": 1})
    assert client.delete(url).status_code == 204
    assert client.get(url).json()["total_entries"] == 0
