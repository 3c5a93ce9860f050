"""``GET /api/v1/jobs`` and ``GET /api/v1/triggers``: triggerers with their heartbeat, capacity
and what each holds; triggers with their task instance and kwargs (sensitive values masked).
On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import MultiFernet
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from triggerer_helpers import defer, make_run

from statewright.api import create_app
from statewright.config import load_settings
from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import jobs as job_repo
from statewright.db.repositories import triggers as trigger_repo
from statewright.sdk.triggers import BaseTrigger, TriggerEvent


class TokenTrigger(BaseTrigger):
    def __init__(self, url: str, api_token: str) -> None:
        super().__init__()
        self.url, self.api_token = url, api_token

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{__name__}.TokenTrigger", {"url": self.url, "api_token": self.api_token})

    async def run(self) -> AsyncIterator[TriggerEvent]:  # pragma: no cover - never run here
        yield TriggerEvent(None)


@pytest.fixture
def client(engine: Engine, tmp_path: Path, cipher: MultiFernet,
           auth_headers: Callable[..., dict[str, str]]) -> Iterator[TestClient]:
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home")})
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine, "vic", "viewer")) as c:
        yield c


def test_triggers_and_the_triggerer_holding_them(client: TestClient, engine: Engine) -> None:
    ids = make_run(engine, 3, dag_id="waits")
    defer(engine, list(ids.values()),
          lambda: TokenTrigger("https://example.test/status", "s3cr3t-value"),
          timeout=timedelta(minutes=30))
    now = utcnow()
    with transaction(engine) as conn:
        alive = job_repo.register(conn, job_type="triggerer", hostname="host-a", pid=11,
                                  capacity=500, now=now)
        dead = job_repo.register(conn, job_type="triggerer", hostname="host-b", pid=12,
                                 capacity=100, now=now - timedelta(hours=1))
        job_repo.register(conn, job_type="scheduler", hostname="host-a", pid=13,
                          capacity=None, now=now)
        trigger_repo.claim(conn, alive, limit=2, heartbeat_after=now - timedelta(minutes=1))

    jobs = client.get("/api/v1/jobs", params={"job_type": "triggerer"}).json()
    assert jobs["total_entries"] == 2 and jobs["unassigned_triggers"] == 1
    by_id = {j["id"]: j for j in jobs["jobs"]}
    assert by_id[alive]["is_alive"] is True and by_id[alive]["held_triggers"] == 2
    assert by_id[alive]["capacity"] == 500 and by_id[alive]["hostname"] == "host-a"
    assert by_id[dead]["is_alive"] is False and by_id[dead]["heartbeat_age_seconds"] >= 3600
    assert [j["id"] for j in client.get("/api/v1/jobs", params={"is_alive": False}).json()[
        "jobs"]] == [dead]
    assert {j["job_type"] for j in client.get("/api/v1/jobs", params={
        "hostname": "host-a"}).json()["jobs"]} == {"triggerer", "scheduler"}

    body = client.get("/api/v1/triggers").json()
    assert body["total_entries"] == 3
    triggers = body["triggers"]
    assert {t["task_instance"]["task_id"] for t in triggers} == {"t0", "t1", "t2"}
    assert all(t["classpath"].endswith("TokenTrigger") for t in triggers)
    assert all(t["task_instance"]["trigger_timeout"] for t in triggers)
    held = [t for t in triggers if t["triggerer_id"] == alive]
    assert len(held) == 2 and all(t["triggerer_alive"] is True for t in held)
    for t in triggers:
        assert "s3cr3t-value" not in t["kwargs"] and '"api_token": "***"' in t["kwargs"]
        assert "https://example.test/status" in t["kwargs"]
    assert len(client.get("/api/v1/triggers", params={"limit": 1, "offset": 1}).json()[
        "triggers"]) == 1
    of_alive = client.get("/api/v1/triggers", params={"triggerer_id": alive}).json()
    assert of_alive["total_entries"] == 2
    assert {t["id"] for t in of_alive["triggers"]} == {t["id"] for t in held}
    assert client.get("/api/v1/triggers", params={"triggerer_id": dead}).json() == {
        "triggers": [], "total_entries": 0}


def test_kwargs_that_cannot_be_decrypted_are_named_not_shown(client: TestClient,
                                                             engine: Engine) -> None:
    with transaction(engine) as conn:
        trigger_repo.insert_many(conn, [("x.Trigger", "not-a-fernet-token")], utcnow())
    [t] = client.get("/api/v1/triggers").json()["triggers"]
    assert t["kwargs"] is None and "cannot be decrypted" in t["kwargs_error"]
    assert t["task_instance"] is None
