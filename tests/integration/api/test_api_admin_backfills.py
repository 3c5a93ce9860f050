"""The backfill routes: create (and dry run), list, get, pause, unpause, cancel, progress; the
same service as ``statewright backfill``. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from api_helpers import store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, select
from tests.noop import NoopOperator

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import backfills as backfill_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.tables import backfill, dag_run
from statewright.sdk import DAG
from statewright.services.backfill import advance_backfills

JAN1 = datetime(2026, 1, 1, tzinfo=UTC)
BODY = {"dag_id": "daily", "from_date": "2026-01-01T00:00:00Z",
        "to_date": "2026-01-05T00:00:00Z", "max_active_runs": 2}


def _daily(engine: Engine, dag_id: str = "daily", schedule: str | None = "@daily") -> None:
    with DAG(dag_id, schedule=schedule, start_date=JAN1) as dag:
        NoopOperator(task_id="a")
    store_dag(engine, dag)


def _count(engine: Engine, table: object) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def test_dry_run_lists_the_dates_and_changes_nothing(client: TestClient, engine: Engine) -> None:
    _daily(engine)
    r = client.post("/api/v1/backfills/dry_run", json=BODY)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["total_entries"] == 5
    assert [d["logical_date"][:10] for d in body["backfills"]] == [
        f"2026-01-0{i}" for i in range(1, 6)]
    assert {d["action"] for d in body["backfills"]} == {"create"}
    assert _count(engine, backfill) == 0 and _count(engine, dag_run) == 0


def test_create_list_get_and_progress(client: TestClient, engine: Engine) -> None:
    _daily(engine)
    r = client.post("/api/v1/backfills", json={**BODY, "to_date": "2026-01-05"})
    assert r.status_code == 200, r.text
    created = r.json()
    assert created["dag_id"] == "daily" and created["is_paused"] is False
    assert created["progress"] == {"total": 5, "pending": 5, "skipped": 0, "queued": 0,
                                   "running": 0, "paused": 0, "success": 0, "failed": 0,
                                   "cancelled": 0}
    advance_backfills(engine, utcnow())  # the scheduler's step: 2 runs at a time
    got = client.get(f"/api/v1/backfills/{created['id']}").json()
    assert got["progress"]["pending"] == 3 and got["progress"]["queued"] == 2
    listed = client.get("/api/v1/backfills", params={"dag_id": "daily"}).json()
    assert listed["total_entries"] == 1 and listed["backfills"][0]["id"] == created["id"]
    assert client.get("/api/v1/backfills", params={"dag_id": "other"}).json()[
        "total_entries"] == 0


def test_pause_stops_new_runs_then_unpause_goes_on(client: TestClient,
                                                   engine: Engine) -> None:
    _daily(engine)
    bf = client.post("/api/v1/backfills", json=BODY).json()
    advance_backfills(engine, utcnow())
    r = client.put(f"/api/v1/backfills/{bf['id']}/pause")
    assert r.status_code == 200 and r.json()["is_paused"] is True
    with transaction(engine) as conn:  # the runs it made go on, they are finished here
        for run_id in backfill_repo.run_ids_in_state(conn, bf["id"], ["queued"]):
            pk = run_repo.get_by_run_id(conn, "daily", run_id).id
            door.set_dag_run_state(conn, pk, frm="queued", to="running",
                                   actor=Actor.SCHEDULER, now=utcnow())
            door.set_dag_run_state(conn, pk, frm="running", to="success",
                                   actor=Actor.SCHEDULER, now=utcnow())
    assert advance_backfills(engine, utcnow()) == 0  # no new run while paused
    assert _count(engine, dag_run) == 2
    paused = client.get(f"/api/v1/backfills/{bf['id']}").json()
    assert paused["progress"]["success"] == 2 and paused["progress"]["pending"] == 3
    r = client.put(f"/api/v1/backfills/{bf['id']}/unpause")
    assert r.json()["is_paused"] is False
    assert advance_backfills(engine, utcnow()) > 0
    assert _count(engine, dag_run) == 4


def test_cancel_cancels_queued_runs_and_completes(client: TestClient, engine: Engine) -> None:
    _daily(engine)
    bf = client.post("/api/v1/backfills", json=BODY).json()
    advance_backfills(engine, utcnow())
    r = client.put(f"/api/v1/backfills/{bf['id']}/cancel")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["completed_at"] is not None and body["is_paused"] is True
    assert body["progress"]["cancelled"] == 2 and body["progress"]["pending"] == 0
    assert body["progress"]["skipped"] == 3
    with engine.connect() as conn:
        states = {r.state for r in conn.execute(select(dag_run.c.state)).all()}
    assert states == {"cancelled"}
    again = client.put(f"/api/v1/backfills/{bf['id']}/cancel")
    assert again.status_code == 409 and "completed" in again.json()["detail"]
    assert client.put(f"/api/v1/backfills/{bf['id']}/unpause").status_code == 409


def test_unknown_dag_and_unknown_backfill_are_404(client: TestClient, engine: Engine) -> None:
    r = client.post("/api/v1/backfills", json={**BODY, "dag_id": "nope"})
    assert r.status_code == 404 and "nope" in r.json()["detail"]
    assert client.post("/api/v1/backfills/dry_run",
                       json={**BODY, "dag_id": "nope"}).status_code == 404
    for path in ("/api/v1/backfills/99", "/api/v1/backfills/99/pause"):
        call = client.get if path.endswith("99") else client.put
        assert call(path).status_code == 404
    assert _count(engine, backfill) == 0


def test_bad_input_is_refused_and_nothing_is_created(client: TestClient,
                                                     engine: Engine) -> None:
    _daily(engine)
    _daily(engine, "manual", schedule=None)
    cases = [
        ({**BODY, "max_active_runs": 0}, 422, "max_active_runs"),
        ({**BODY, "reprocess_behavior": "sometimes"}, 422, "reprocess_behavior"),
        ({**BODY, "from_date": "yesterday"}, 422, "from_date"),
        ({**BODY, "extra": 1}, 422, "extra"),
        ({"dag_id": "daily"}, 422, "from_date"),
        ({**BODY, "from_date": "2026-01-05", "to_date": "2026-01-01"}, 409, "before"),
        ({**BODY, "dag_id": "manual"}, 409, "time-based schedule"),
    ]
    for body, status, words in cases:
        r = client.post("/api/v1/backfills", json=body)
        assert r.status_code == status, (body, r.text)
        assert words in r.text
    r = client.post("/api/v1/backfills", content=b"{not json",
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 422
    assert _count(engine, backfill) == 0


def test_a_viewer_may_read_but_not_create_or_control(engine: Engine, client: TestClient,
                                                     auth_headers: Callable[..., dict[str, str]]
                                                     ) -> None:
    _daily(engine)
    bf = client.post("/api/v1/backfills", json=BODY).json()
    viewer = auth_headers(engine, "vera", "viewer")
    assert client.get("/api/v1/backfills", headers=viewer).status_code == 200
    assert client.post("/api/v1/backfills", json=BODY, headers=viewer).status_code == 403
    assert client.post("/api/v1/backfills/dry_run", json=BODY, headers=viewer).status_code == 403
    for action in ("pause", "cancel"):
        assert client.put(f"/api/v1/backfills/{bf['id']}/{action}",
                          headers=viewer).status_code == 403
    assert _count(engine, backfill) == 1
