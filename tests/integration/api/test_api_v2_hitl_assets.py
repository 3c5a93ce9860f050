"""/api/v2's human-in-the-loop details (list with filters, one, answer) and the asset routes
beyond the list: one asset, aliases, events filtered and ordered, queued events read and
deleted; on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from api_helpers import store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from tests.hitl_helpers import drive

from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.sdk import DAG, Asset, AssetAlias, EmptyOperator, HITLOperator
from statewright.services.dag_processor.asset_refs import sync_dag_assets

V2 = "/api/v2"


def test_hitl_details_list_get_and_answer(client: TestClient, engine: Engine,
                                          tmp_path: Path) -> None:
    with DAG("hitl_v2") as dag:
        HITLOperator(task_id="approve", subject="Ship it?", body="release 7",
                     options=["yes", "no"])
        HITLOperator(task_id="review", subject="Looks right?", options=["ok"])
    d = drive(engine, dag, tmp_path)
    d.settle()
    url = f"{V2}/dags/hitl_v2/dagRuns/{d.run_id}/hitlDetails"
    listed = client.get(url, params={"order_by": "subject"}).json()
    assert [h["subject"] for h in listed["hitl_details"]] == ["Looks right?", "Ship it?"]
    first = listed["hitl_details"][0]["task_instance"]
    assert (first["task_id"], first["state"], first["dag_run_id"]) == (
        "review", "awaiting_input", d.run_id)
    every = client.get(f"{V2}/dags/~/dagRuns/~/hitlDetails",
                       params={"body_search": "RELEASE"}).json()
    assert [h["task_instance"]["task_id"] for h in every["hitl_details"]] == ["approve"]
    assert client.get(url, params={"task_id_pattern": "rev"}).json()["total_entries"] == 1
    assert client.get(url, params={"created_at_gte": "2000-01-01T00:00:00"}
                      ).json()["total_entries"] == 2
    assert client.get(url, params={"created_at_lt": "2000-01-01T00:00:00Z"}
                      ).json()["total_entries"] == 0

    one = f"{V2}/dags/hitl_v2/dagRuns/{d.run_id}/taskInstances/approve/-1/hitlDetails"
    got = client.get(one).json()
    assert (got["options"], got["response_received"]) == (["yes", "no"], False)
    answered = client.patch(one, json={"chosen_options": ["yes"]})
    assert answered.status_code == 200, answered.text
    body = answered.json()
    assert (body["chosen_options"], body["responded_by"]["name"]) == (["yes"], "admin")
    assert client.patch(one, json={"chosen_options": ["no"]}).status_code == 409
    assert client.patch(one, json={"chosen_options": ["maybe"]}).status_code in (409, 422)
    assert client.get(one).json()["responded_by_user"]["id"] == "admin"
    assert client.get(url, params={"response_received": "true"}).json()["total_entries"] == 1
    assert client.get(url, params={"responded_by_user_name": "admin"}
                      ).json()["total_entries"] == 1
    missing = f"{V2}/dags/hitl_v2/dagRuns/{d.run_id}/taskInstances/nope/-1/hitlDetails"
    assert client.get(missing).status_code == 404


def _assets(engine: Engine) -> dict[str, int]:
    orders, refunds = Asset(name="orders", uri="s3://b/orders"), Asset(name="refunds")
    with DAG("producer") as producer:
        EmptyOperator(task_id="publish", outlets=[orders, refunds, AssetAlias("any_sale")])
    with DAG("consumer", schedule=[orders]) as consumer:
        EmptyOperator(task_id="use")
    with DAG("both", schedule=orders | refunds) as both:
        EmptyOperator(task_id="use")
    with DAG("refunder") as refunder:
        EmptyOperator(task_id="refund", outlets=[refunds])
    serialized = [store_dag(engine, d) for d in (producer, consumer, both, refunder)]
    with transaction(engine) as conn:
        sync_dag_assets(conn, serialized, utcnow())
    return {}


def test_assets_aliases_events_and_queued_events(client: TestClient, engine: Engine) -> None:
    _assets(engine)
    ids = {a["name"]: a["id"] for a in client.get(f"{V2}/assets").json()["assets"]}
    orders = ids["orders"]
    assert client.get(f"{V2}/assets/{orders}").json()["uri"] == "s3://b/orders"
    assert client.get(f"{V2}/assets/999999").status_code == 404
    assert [a["name"] for a in client.get(
        f"{V2}/assets", params={"order_by": "-name", "name_prefix_pattern": "r"}
    ).json()["assets"]] == ["refunds"]
    aliases = client.get(f"{V2}/assets/aliases").json()["asset_aliases"]
    assert [a["name"] for a in aliases] == ["any_sale"]
    assert client.get(f"{V2}/assets/aliases/{aliases[0]['id']}").json()["name"] == "any_sale"
    assert client.get(f"{V2}/assets/aliases/999999").status_code == 404

    for asset_id, n in ((orders, 1), (ids["refunds"], 2), (orders, 3)):
        made = client.post(f"{V2}/assets/events", json={"asset_id": asset_id,
                                                         "extra": {"n": n}})
        assert made.status_code == 200, made.text
    events = client.get(f"{V2}/assets/events").json()
    assert [e["extra"]["n"] for e in events["asset_events"]] == [1, 2, 3]  # oldest first
    newest = client.get(f"{V2}/assets/events", params={"order_by": "-timestamp", "limit": 1,
                                                       "name_pattern": "ORD"}).json()
    assert [e["extra"]["n"] for e in newest["asset_events"]] == [3]
    assert newest["total_entries"] == 2

    queued = client.get(f"{V2}/assets/{orders}/queuedEvents").json()
    assert sorted(q["dag_id"] for q in queued["queued_events"]) == ["both", "consumer"]
    pair = client.get(f"{V2}/dags/both/assets/{ids['refunds']}/queuedEvents").json()
    assert (pair["dag_id"], pair["asset_id"]) == ("both", ids["refunds"])
    assert client.get(f"{V2}/dags/both/assets/queuedEvents").json()["total_entries"] == 2

    gone = client.delete(f"{V2}/dags/both/assets/{ids['refunds']}/queuedEvents")
    assert gone.status_code == 204
    assert client.get(f"{V2}/dags/both/assets/{ids['refunds']}/queuedEvents"
                      ).status_code == 404
    assert client.delete(f"{V2}/assets/{orders}/queuedEvents").status_code == 204
    assert client.get(f"{V2}/assets/{orders}/queuedEvents").status_code == 404
    again = client.delete(f"{V2}/dags/consumer/assets/queuedEvents")
    assert again.status_code == 404 and "consumer" in again.json()["detail"]


def test_materialize_triggers_the_producing_dag(client: TestClient, engine: Engine) -> None:
    _assets(engine)
    ids = {a["name"]: a["id"] for a in client.get(f"{V2}/assets").json()["assets"]}
    run = client.post(f"{V2}/assets/{ids['orders']}/materialize",
                      json={"dag_run_id": "materialized", "conf": {"why": "backfill"}})
    assert run.status_code == 200, run.text
    assert (run.json()["dag_id"], run.json()["dag_run_id"], run.json()["state"]) == (
        "producer", "materialized", "queued")
    assert client.get(f"{V2}/dags/producer/dagRuns/materialized").json()["conf"] == {
        "why": "backfill"}
    both = client.post(f"{V2}/assets/{ids['refunds']}/materialize")
    assert both.status_code == 409 and "producer, refunder" in both.json()["detail"]
    assert client.post(f"{V2}/assets/999999/materialize").status_code == 404
