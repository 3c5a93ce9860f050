"""The DAG list's filters as Airflow 3's: owners, the newest run's state, favourites (a star
per DAG per user, kept on the server), with bad values answered 4xx."""

from __future__ import annotations

from collections.abc import Callable

from api_helpers import add_runs, chain_dag, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.config import Settings


def _ids(client: TestClient, **params: object) -> list[str]:
    answer = client.get("/api/v1/dags", params=params)  # type: ignore[arg-type]
    assert answer.status_code == 200, answer.text
    return [d["dag_id"] for d in answer.json()["dags"]]


def test_owners_and_last_run_state_filter_the_list(client: TestClient, engine: Engine) -> None:
    store_dag(engine, chain_dag("ann_dag", 2, default_args={"owner": "ann"}))
    bob = store_dag(engine, chain_dag("bob_dag", 2, default_args={"owner": "bob"}))
    store_dag(engine, chain_dag("idle", 1))
    add_runs(engine, bob, ["r1"])
    assert _ids(client, owners="ann") == ["ann_dag"]
    assert _ids(client, owners=["ann", "bob"]) == ["ann_dag", "bob_dag"]
    listed = {d["dag_id"]: d for d in client.get("/api/v1/dags").json()["dags"]}
    assert listed["bob_dag"]["owners"] == ["bob"]
    assert _ids(client, last_dag_run_state="queued") == ["bob_dag"]
    assert _ids(client, last_dag_run_state="failed") == []
    bad = client.get("/api/v1/dags", params={"last_dag_run_state": "sleepy"})
    assert bad.status_code == 422 and "last_dag_run_state" in bad.text


def test_a_star_is_kept_per_user_and_filters_the_list(
        engine: Engine, settings: Settings, client: TestClient,
        auth_headers: Callable[..., dict[str, str]]) -> None:
    for name in ("a", "b", "c"):
        store_dag(engine, chain_dag(name, 1))
    viewer = TestClient(create_app(engine=engine, settings=settings),
                        headers=auth_headers(engine, "vera", "viewer"))
    assert viewer.post("/api/v1/dags/b/favorite").status_code == 204
    assert viewer.post("/api/v1/dags/b/favorite").status_code == 204  # twice: still one star
    assert _ids(viewer, is_favorite="true") == ["b"]
    assert _ids(viewer, is_favorite="false") == ["a", "c"]
    assert {d["dag_id"]: d["is_favorite"] for d in viewer.get("/api/v1/dags").json()["dags"]} \
        == {"a": False, "b": True, "c": False}
    assert _ids(client, is_favorite="true") == []  # the admin starred nothing
    assert client.post("/api/v1/dags/c/favorite").status_code == 204
    assert _ids(client, is_favorite="true") == ["c"] and _ids(viewer, is_favorite="true") == ["b"]
    assert viewer.delete("/api/v1/dags/b/favorite").status_code == 204
    assert viewer.delete("/api/v1/dags/b/favorite").status_code == 204
    assert _ids(viewer, is_favorite="true") == []


def test_bad_stars_are_refused(client: TestClient, anonymous: TestClient,
                               engine: Engine) -> None:
    store_dag(engine, chain_dag("a", 1))
    missing = client.post("/api/v1/dags/nope/favorite")
    assert missing.status_code == 404 and "nope" in missing.json()["detail"]
    assert client.delete("/api/v1/dags/nope/favorite").status_code == 404
    assert anonymous.post("/api/v1/dags/a/favorite").status_code == 401
    bad = client.get("/api/v1/dags", params={"is_favorite": "maybe"})
    assert bad.status_code == 422


def test_the_dag_list_page_reads_its_filters(client: TestClient, engine: Engine) -> None:
    store_dag(engine, chain_dag("ann_dag", 1, default_args={"owner": "ann"}))
    store_dag(engine, chain_dag("other", 1))
    page = client.get("/", params={"owner": "ann", "paused": "", "favorite": "",
                                   "last_run_state": ""})
    assert page.status_code == 200 and '"ann_dag"' in page.text and '"other"' not in page.text
    tagged = client.get("/", params={"tag": "x", "owner": "ann", "paused": "true"}).text
    off = tagged.split('id="filter-tag-off" href="', 1)[1].split('"', 1)[0]
    assert "owner=ann" in off and "paused=true" in off and "tag=&" in off + "&"
    assert client.get("/", params={"last_run_state": "sleepy"}).status_code == 422
    assert client.get("/", params={"favorite": "maybe"}).status_code == 422


def test_api_v2_stars_as_airflow_does(client: TestClient, engine: Engine) -> None:
    store_dag(engine, chain_dag("a", 1))
    assert client.post("/api/v2/dags/a/favorite").status_code == 204
    assert _ids(client, is_favorite="true") == ["a"]  # the same stars as /api/v1 and the UI
    assert client.post("/api/v2/dags/a/unfavorite").status_code == 204
    again = client.post("/api/v2/dags/a/unfavorite")
    assert again.status_code == 409 and "not marked as a favorite" in again.json()["detail"]
    assert client.post("/api/v2/dags/nope/favorite").status_code == 404
    assert client.post("/api/v2/dags/nope/unfavorite").status_code == 404
