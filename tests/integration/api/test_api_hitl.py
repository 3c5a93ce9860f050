"""The hitlDetails routes: bad input answered with the right status and nothing written (not
awaiting input 409, a field failing its schema 422, a person not named 403, two responses at
once: one 200 and one 409), on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine
from tests.hitl_helpers import Driven, drive

from statewright.api import create_app
from statewright.config import Settings
from statewright.db.repositories import hitl as hitl_repo
from statewright.sdk import DAG, HITLEntryOperator, HITLOperator, Param


def _dag() -> DAG:
    with DAG("hitl_api") as dag:
        HITLEntryOperator(task_id="form", subject="Fill <b>this</b>",
                          params={"count": Param(1, type="integer", minimum=1)})
        HITLOperator(task_id="bobs", subject="Bob only", options=["yes", "no"],
                     assigned_users=["bob"])
        HITLOperator(task_id="race", subject="Race", options=["a", "b"])
    return dag


def _url(d: Driven, task_id: str) -> str:
    return f"/api/v1/dags/hitl_api/dagRuns/{d.run_id}/taskInstances/{task_id}/hitlDetails"


def _unanswered(d: Driven, task_id: str) -> bool:
    with d.engine.connect() as conn:
        return bool(hitl_repo.get(conn, d.ti(task_id).id).responded_at is None)


def test_bad_responses(engine: Engine, client: TestClient, tmp_path: Path, settings: Settings,
                       auth_headers: Callable[..., dict[str, str]]) -> None:
    d = drive(engine, _dag(), tmp_path)
    d.settle()
    # 422 naming the field; nothing written
    r = client.patch(_url(d, "form"), json={"chosen_options": ["OK"],
                                            "params_input": {"count": 0}})
    assert r.status_code == 422 and "'count'" in r.json()["detail"]
    assert r.json()["errors"][0]["field"] == "count"
    r = client.patch(_url(d, "form"), json={"chosen_options": ["maybe"]})
    assert r.status_code == 422 and "chosen_options" in r.json()["detail"]
    r = client.patch(_url(d, "form"), json={"chosen_options": []})
    assert r.status_code == 422
    assert _unanswered(d, "form") and d.states()["form"] == "awaiting_input"
    # 403: the request names bob; nothing written
    r = client.patch(_url(d, "bobs"), json={"chosen_options": ["yes"]})
    assert r.status_code == 403 and "'admin' may not respond" in r.json()["detail"]
    assert _unanswered(d, "bobs")
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine, "bob", "operator")) as bob:
        assert bob.patch(_url(d, "bobs"), json={"chosen_options": ["no"]}).status_code == 200
        # a viewer may read the requests but not respond
        with TestClient(create_app(engine=engine, settings=settings),
                        headers=auth_headers(engine, "vera", "viewer")) as vera:
            assert vera.get("/api/v1/hitlDetails").status_code == 200
            assert vera.patch(_url(d, "race"), json={"chosen_options": ["a"]}).status_code \
                == 403
    # 409 once answered; nothing written
    r = client.patch(_url(d, "bobs"), json={"chosen_options": ["yes"]})
    assert r.status_code == 409
    assert client.get(_url(d, "bobs")).json()["chosen_options"] == ["no"]
    listed = client.get("/api/v1/hitlDetails", params={"limit": 1}).json()
    assert listed["total_entries"] == 3 and len(listed["hitl_details"]) == 1
    answered = client.get("/api/v1/hitlDetails", params={"response_received": True}).json()
    assert [h["task_instance"]["task_id"] for h in answered["hitl_details"]] == ["bobs"]
    # 404: no such task, or a task that never asked
    assert client.get(_url(d, "nope")).status_code == 404
    assert client.patch(_url(d, "nope"), json={"chosen_options": ["a"]}).status_code == 404


def test_two_responses_at_once_one_wins(engine: Engine, client: TestClient,
                                        tmp_path: Path) -> None:
    d = drive(engine, _dag(), tmp_path)
    d.settle()
    barrier = threading.Barrier(2)
    codes: list[int] = []

    def one(option: str) -> None:
        barrier.wait()
        codes.append(client.patch(_url(d, "race"), json={"chosen_options": [option]})
                     .status_code)

    threads = [threading.Thread(target=one, args=(o,)) for o in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200, 409]
    detail: dict[str, Any] = client.get(_url(d, "race")).json()
    assert detail["response_received"] and len(detail["chosen_options"]) == 1
    assert detail["task_instance"]["state"] == "scheduled"


def test_a_mapped_task_instance_is_answered_by_its_map_index(
        engine: Engine, client: TestClient, tmp_path: Path) -> None:
    with DAG("hitl_api_mapped") as dag:
        HITLOperator.partial(task_id="ask", subject="Which?", options=["a", "b"]).expand(
            body=["first", "second"])
    d = drive(engine, dag, tmp_path)
    d.settle()
    base = f"/api/v1/dags/hitl_api_mapped/dagRuns/{d.run_id}/taskInstances/ask"
    assert client.get(f"{base}/1/hitlDetails").json()["body"] == "second"
    r = client.patch(f"{base}/1/hitlDetails", json={"chosen_options": ["b"]})
    assert r.status_code == 200 and r.json()["task_instance"]["map_index"] == 1
    assert client.get(f"{base}/0/hitlDetails").json()["response_received"] is False
    d.settle()
    with engine.connect() as conn:
        from statewright.db.repositories import task_instances as ti_repo

        states = {t.map_index: t.state for t in ti_repo.by_run(conn, d.run_pk)}
    assert states == {0: "awaiting_input", 1: "success"}
