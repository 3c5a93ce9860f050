"""/api/v2's bulk routes (PATCH /connections, /variables, /pools) with Airflow's BulkResponse,
and the list filters of connections, variables and pools (patterns, order_by; an unknown sort
field is a 400 naming it)."""

from __future__ import annotations

from fastapi.testclient import TestClient

V2 = "/api/v2"


def _bulk(client: TestClient, path: str, *actions: dict[str, object]) -> dict[str, object]:
    answer = client.patch(f"{V2}/{path}", json={"actions": list(actions)})
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def test_bulk_connections_create_update_delete(client: TestClient) -> None:
    made = _bulk(client, "connections", {"action": "create", "entities": [
        {"connection_id": "a_db", "conn_type": "postgres", "host": "a", "password": "pw"},
        {"connection_id": "b_db", "conn_type": "mysql", "host": "b"}]})
    assert made == {"create": {"success": ["a_db", "b_db"], "errors": []},
                    "update": None, "delete": None}
    again = _bulk(client, "connections", {"action": "create", "entities": [
        {"connection_id": "a_db", "conn_type": "http"},
        {"connection_id": "c_db", "conn_type": "http"}]})
    assert again["create"]["success"] == []  # type: ignore[index]
    [error] = again["create"]["errors"]  # type: ignore[index]
    assert error["status_code"] == 409 and "a_db" in error["error"]
    assert client.get(f"{V2}/connections/c_db").status_code == 404  # fail: nothing made

    mixed = _bulk(
        client, "connections",
        {"action": "create", "action_on_existence": "skip", "entities": [
            {"connection_id": "a_db", "conn_type": "http"},
            {"connection_id": "c_db", "conn_type": "http"}]},
        {"action": "update", "update_mask": ["host"], "entities": [
            {"connection_id": "a_db", "conn_type": "ignored", "host": "a2"}]},
        {"action": "delete", "entities": ["b_db", "nope"], "action_on_non_existence": "skip"})
    assert mixed["create"]["success"] == ["c_db"]  # type: ignore[index]
    assert mixed["update"]["success"] == ["a_db"]  # type: ignore[index]
    assert mixed["delete"]["success"] == ["b_db"]  # type: ignore[index]
    a_db = client.get(f"{V2}/connections/a_db").json()
    assert (a_db["host"], a_db["conn_type"], a_db["password"]) == ("a2", "postgres", "***")
    assert client.get(f"{V2}/connections/b_db").status_code == 404

    missing = _bulk(client, "connections", {"action": "delete", "entities": ["nope"]})
    assert missing["delete"]["errors"][0]["status_code"] == 404  # type: ignore[index]


def test_bulk_variables_and_pools(client: TestClient) -> None:
    done = _bulk(client, "variables", {"action": "create", "entities": [
        {"key": "v1", "value": "one"}, {"key": "v2", "value": {"n": 2}}]},
        {"action": "update", "entities": [{"key": "v1", "value": "uno",
                                           "description": "changed"}]})
    assert done["create"]["success"] == ["v1", "v2"]  # type: ignore[index]
    assert done["update"]["success"] == ["v1"]  # type: ignore[index]
    v1 = client.get(f"{V2}/variables/v1").json()
    assert (v1["value"], v1["description"]) == ("uno", "changed")
    assert client.get(f"{V2}/variables/v2").json()["value"] == '{"n": 2}'
    overwrite = _bulk(client, "variables", {"action": "create", "action_on_existence":
                                            "overwrite", "entities": [{"key": "v2",
                                                                       "value": "x"}]})
    assert overwrite["create"]["success"] == ["v2"]  # type: ignore[index]
    assert client.get(f"{V2}/variables/v2").json()["value"] == "x"

    assert client.get(f"{V2}/pools").status_code == 200  # default_pool made when missing
    pools = _bulk(client, "pools", {"action": "create", "entities": [
        {"name": "p1", "slots": 2}, {"name": "p2", "slots": 3}]},
        {"action": "update", "entities": [{"name": "p1", "slots": 7}]},
        {"action": "delete", "entities": ["p2", "default_pool"]})
    assert pools["create"]["success"] == ["p1", "p2"]  # type: ignore[index]
    assert client.get(f"{V2}/pools/p1").json()["slots"] == 7
    deleted = pools["delete"]
    assert deleted["success"] == ["p2"]  # type: ignore[index]
    assert deleted["errors"][0]["status_code"] == 400  # type: ignore[index]
    assert client.get(f"{V2}/pools/default_pool").status_code == 200


def test_bulk_refuses_a_malformed_body_and_needs_admin(
        client: TestClient, engine: object, auth_headers: object) -> None:
    bad = client.patch(f"{V2}/pools", json={"actions": [{"action": "rename", "entities": []}]})
    assert bad.status_code == 422 and "detail" in bad.json()
    viewer = auth_headers(engine, "viewer", "viewer")  # type: ignore[operator]
    refused = client.patch(f"{V2}/variables", json={"actions": []}, headers=viewer)
    assert refused.status_code == 403


def test_list_filters_patterns_and_order(client: TestClient) -> None:
    for key in ("alpha_one", "beta_two", "alpha_three"):
        assert client.post(f"{V2}/variables", json={"key": key, "value": "x"}).status_code == 201
    keys = [v["key"] for v in client.get(
        f"{V2}/variables", params={"variable_key_pattern": "ALPHA", "order_by": "-key"}
    ).json()["variables"]]
    assert keys == ["alpha_three", "alpha_one"]
    prefixed = client.get(f"{V2}/variables", params={"variable_key_prefix_pattern": "b%o"})
    assert [v["key"] for v in prefixed.json()["variables"]] == ["beta_two"]
    assert prefixed.json()["total_entries"] == 1
    underscore = client.get(f"{V2}/variables", params={"variable_key_pattern": "a_one"})
    assert [v["key"] for v in underscore.json()["variables"]] == ["alpha_one"]
    bad = client.get(f"{V2}/variables", params={"order_by": "value"})
    assert bad.status_code == 400 and "'value'" in bad.json()["detail"]

    for name in ("etl", "ml"):
        client.post(f"{V2}/pools", json={"name": name, "slots": 1})
    pools = client.get(f"{V2}/pools", params={"order_by": "-name", "limit": 2}).json()
    assert [p["name"] for p in pools["pools"]] == ["ml", "etl"]
    assert pools["total_entries"] == 3
    only = client.get(f"{V2}/pools", params={"pool_name_pattern": "default"}).json()
    assert [p["name"] for p in only["pools"]] == ["default_pool"]
    client.post(f"{V2}/connections", json={"connection_id": "wh_1", "conn_type": "postgres"})
    conns = client.get(f"{V2}/connections", params={"connection_id_pattern": "wh"}).json()
    assert [c["connection_id"] for c in conns["connections"]] == ["wh_1"]


def test_connection_test_is_off_by_default(client: TestClient) -> None:
    body = {"connection_id": "probe", "conn_type": "sqlite", "host": "/nonexistent.db"}
    refused = client.post(f"{V2}/connections/test", json=body)
    assert refused.status_code == 403
    assert "STATEWRIGHT_TEST_CONNECTION" in refused.json()["detail"]
    assert client.post(f"{V2}/connections/test", json={"conn_type": "x"}).status_code == 422
