"""The pool routes: CRUD with occupancy, refusals (default_pool, unknown pool, bad bodies,
non-admins). On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

from api_helpers import chain_dag, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select

from statewright.core.clock import utcnow
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import pools as pool_repo
from statewright.db.tables import pool, task_instance
from statewright.services.dag_runs import create_run
from statewright.services.dag_view import DagView


def _pools(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {r.name: r.slots for r in conn.execute(select(pool)).all()}


def _occupy(engine: Engine, pool_name: str) -> None:
    """Three task instances in ``pool_name``: one scheduled, one queued, one running."""
    serialized = store_dag(engine, chain_dag("busy", 3))
    for t in serialized["tasks"]:
        t["pool"] = pool_name
    now = utcnow()
    with transaction(engine) as conn:
        run_pk = create_run(conn, DagView(serialized, dag_repo.dag_hash(serialized)), now=now,
                            actor=Actor.SCHEDULER, run_id="r1", run_type="manual")
        ids = [r.id for r in conn.execute(select(task_instance.c.id).where(
            task_instance.c.dag_run_id == run_pk).order_by(task_instance.c.task_id)).all()]
        door.set_task_instance_state(conn, ids, frm=TI.NONE, to=TI.SCHEDULED,
                                     actor=Actor.SCHEDULER, now=now)
        door.set_task_instance_state(conn, ids[1:], frm=TI.SCHEDULED, to=TI.QUEUED,
                                     actor=Actor.SCHEDULER, now=now)
        door.set_task_instance_state(conn, ids[2:], frm=TI.QUEUED, to=TI.RUNNING,
                                     actor=Actor.EXECUTOR, now=now, increment_try=True)


def test_create_get_patch_delete(client: TestClient, engine: Engine) -> None:
    r = client.post("/api/v1/pools", json={"name": "db", "slots": 4, "description": "the db"})
    assert r.status_code == 201, r.text
    assert r.json() == {"name": "db", "slots": 4, "description": "the db",
                        "include_deferred": False, "occupied_slots": 0, "running_slots": 0,
                        "queued_slots": 0, "scheduled_slots": 0, "deferred_slots": 0,
                        "open_slots": 4}
    r = client.patch("/api/v1/pools/db", json={"slots": 6, "include_deferred": True})
    assert r.status_code == 200 and r.json()["slots"] == 6
    assert r.json()["include_deferred"] is True and r.json()["description"] == "the db"
    names = [p["name"] for p in client.get("/api/v1/pools").json()["pools"]]
    assert names == ["db", "default_pool"]
    assert client.delete("/api/v1/pools/db").status_code == 204
    assert "db" not in _pools(engine)
    assert client.get("/api/v1/pools/db").status_code == 404


def test_occupancy_counts_the_task_instances_by_state(client: TestClient,
                                                      engine: Engine) -> None:
    client.post("/api/v1/pools", json={"name": "db", "slots": 2})
    _occupy(engine, "db")
    got = client.get("/api/v1/pools/db").json()
    assert (got["scheduled_slots"], got["queued_slots"], got["running_slots"]) == (1, 1, 1)
    assert got["occupied_slots"] == 2 and got["open_slots"] == 0


def test_refusals_change_nothing(client: TestClient, engine: Engine) -> None:
    client.get("/api/v1/pools")  # creates default_pool
    with transaction(engine) as conn:
        pool_repo.set_pool(conn, "db", 3)
    before = _pools(engine)
    r = client.delete("/api/v1/pools/default_pool")
    assert r.status_code == 400 and "cannot be deleted" in r.json()["detail"]
    assert client.delete("/api/v1/pools/nope").status_code == 404
    assert client.patch("/api/v1/pools/nope", json={"slots": 1}).status_code == 404
    assert client.post("/api/v1/pools", json={"name": "db", "slots": 9}).status_code == 409
    for body in ({"name": "x", "slots": -1}, {"name": "", "slots": 1}, {"name": "x"},
                 {"name": "x", "slots": "many"}, {"name": "x", "slots": 1, "colour": "red"}):
        r = client.post("/api/v1/pools", json=body)
        assert r.status_code == 422, (body, r.text)
    assert client.patch("/api/v1/pools/db", json={"slots": -2}).status_code == 422
    r = client.post("/api/v1/pools", content=b"[1,",
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and "not valid JSON" in r.json()["detail"]
    assert client.post("/api/v1/pools", json={"name": " ", "slots": 1}).status_code == 400
    assert _pools(engine) == before


def test_only_an_admin_changes_pools(client: TestClient, engine: Engine,
                                     auth_headers: Callable[..., dict[str, str]]) -> None:
    client.post("/api/v1/pools", json={"name": "db", "slots": 3})
    for role in ("viewer", "operator"):
        headers = auth_headers(engine, f"u_{role}", role)
        assert client.get("/api/v1/pools", headers=headers).status_code == 200
        assert client.post("/api/v1/pools", json={"name": "x", "slots": 1},
                           headers=headers).status_code == 403
        assert client.patch("/api/v1/pools/db", json={"slots": 1},
                            headers=headers).status_code == 403
        assert client.delete("/api/v1/pools/db", headers=headers).status_code == 403
    assert _pools(engine)["db"] == 3 and "x" not in _pools(engine)
