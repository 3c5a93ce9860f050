"""/api/v1/connections and /api/v1/variables (SQLite and PostgreSQL): Airflow's shapes, no
password ever returned, sensitive values masked, bad input named."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from statewright.crypto import generate_key, load_fernet
from statewright.sdk import masking
from statewright.services.worker.deferral import install_cipher, installed_cipher

PASSWORD = "api-pass-w0rd"


@pytest.fixture(autouse=True)
def _key() -> Iterator[None]:
    before = installed_cipher()
    install_cipher(load_fernet(generate_key()))
    yield
    install_cipher(before)
    masking.reset_masks()


def test_connections_crud_never_returns_the_password(client: TestClient) -> None:
    body = {"connection_id": "wh", "conn_type": "postgres", "host": "h", "port": 5432,
            "login": "u", "password": PASSWORD, "schema": "db",
            "extra": '{"sslmode": "require", "api_token": "xyz-secret"}'}
    created = client.post("/api/v1/connections", json=body)
    assert created.status_code == 200, created.text
    assert client.post("/api/v1/connections", json=body).status_code == 409
    got = client.get("/api/v1/connections/wh").json()
    assert got["schema"] == "db" and got["has_password"] is True
    assert '"api_token": "***"' in got["extra"]
    listed = client.get("/api/v1/connections")
    assert listed.json()["total_entries"] == 1
    patched = client.patch("/api/v1/connections/wh", params={"update_mask": ["host"]},
                           json={**body, "host": "new-host", "password": None})
    assert patched.status_code == 200 and patched.json()["host"] == "new-host"
    for response in (created, listed, patched, client.get("/api/v1/connections/wh")):
        assert PASSWORD not in response.text and "xyz-secret" not in response.text
    assert client.delete("/api/v1/connections/wh").status_code == 204
    assert client.get("/api/v1/connections/wh").status_code == 404


def test_bad_connection_input_is_named(client: TestClient) -> None:
    r = client.post("/api/v1/connections", json={"connection_id": "x", "conn_type": "postgres",
                                                 "extra": "{not json"})
    assert r.status_code == 422 and "extra is not valid JSON" in r.json()["detail"]


def test_variables_crud_masks_sensitive_values(client: TestClient) -> None:
    assert client.post("/api/v1/variables", json={"key": "threshold", "value": "5",
                                                  "description": "d"}).status_code == 200
    assert client.post("/api/v1/variables", json={"key": "db_password",
                                                  "value": "v-secret"}).status_code == 200
    listed = client.get("/api/v1/variables").json()
    assert listed["total_entries"] == 2
    values = {v["key"]: v["value"] for v in listed["variables"]}
    assert values == {"db_password": "***", "threshold": "5"}
    assert client.get("/api/v1/variables/nope").status_code == 404
    r = client.patch("/api/v1/variables/threshold", json={"key": "threshold", "value": "6"})
    assert r.json()["value"] == "6"
    assert client.delete("/api/v1/variables/threshold").status_code == 204


def test_admin_pages_show_no_password_and_escape_values(client: TestClient) -> None:
    client.post("/api/v1/connections", json={
        "connection_id": "wh", "conn_type": "postgres", "host": "<b>h</b>",
        "password": PASSWORD, "extra": '{"note": "<script>x</script>"}'})
    client.post("/api/v1/variables", json={"key": "greeting", "value": "<i>hi</i>"})
    client.post("/api/v1/variables", json={"key": "service_token", "value": "tok-secret-1"})
    page = client.get("/connections")
    assert page.status_code == 200 and "/static/secrets.js" in page.text
    assert PASSWORD not in page.text and "<b>h</b>" not in page.text
    assert "&lt;b&gt;h&lt;/b&gt;" in page.text and "<script>x" not in page.text
    assert 'type="password"' in page.text
    variables = client.get("/variables")
    assert variables.status_code == 200 and "&lt;i&gt;hi&lt;/i&gt;" in variables.text
    assert "tok-secret-1" not in variables.text


def test_connection_test_route(client: TestClient, tmp_path_factory: pytest.TempPathFactory,
                               ) -> None:
    path = tmp_path_factory.mktemp("target") / "t.db"
    sqlite3.connect(path).close()  # the test opens an existing database, never creates one
    app: Any = client.app
    app.state.settings = app.state.settings.with_overrides(test_connection=True)
    good = client.post("/api/v1/connections/test", json={
        "connection_id": "lite", "conn_type": "sqlite", "host": str(path)})
    assert good.json() == {"status": True, "message": "Connection successfully tested"}
    bad = client.post("/api/v1/connections/test", json={
        "connection_id": "pg", "conn_type": "postgres", "host": "127.0.0.1", "port": 1,
        "password": "never-shown-1"})
    assert bad.json()["status"] is False and "never-shown-1" not in bad.text
