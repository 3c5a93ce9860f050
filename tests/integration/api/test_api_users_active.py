"""Deactivating a user (PATCH /users/{username} with active: false): it cannot sign in, its
sessions and API tokens end at once, the only active admin is kept; reactivating gives its
password back. The users page lists each user's status and every role with what it may do."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.config import Settings


def _login(client: TestClient, username: str) -> int:
    return client.post("/api/v1/auth/token", json={
        "username": username, "password": f"password-{username}"}).status_code


def test_a_deactivated_user_cannot_sign_in_until_reactivated(
        engine: Engine, settings: Settings, client: TestClient, anonymous: TestClient,
        auth_headers: Callable[..., dict[str, str]]) -> None:
    vera = TestClient(create_app(engine=engine, settings=settings),
                      headers=auth_headers(engine, "vera", "viewer"))
    assert vera.get("/api/v1/dags").status_code == 200 and _login(anonymous, "vera") == 201
    done = client.patch("/api/v1/users/vera", json={"active": False})
    assert done.status_code == 200 and done.json()["active"] is False
    assert vera.get("/api/v1/dags").status_code == 401  # its API token ended at once
    assert _login(anonymous, "vera") == 401
    listed = {u["username"]: u["active"] for u in client.get("/api/v1/users").json()["users"]}
    assert listed == {"admin": True, "vera": False}
    again = client.patch("/api/v1/users/vera", json={"active": False})  # twice: no change
    assert again.status_code == 200 and again.json()["active"] is False
    assert client.patch("/api/v1/users/vera", json={"active": True}).json()["active"] is True
    assert _login(anonymous, "vera") == 201  # the same password works again
    assert vera.get("/api/v1/dags").status_code == 401  # a revoked token stays revoked


def test_deactivation_keeps_an_admin_and_refuses_bad_input(
        client: TestClient, engine: Engine, auth_headers: Callable[..., dict[str, str]]) -> None:
    only = client.patch("/api/v1/users/admin", json={"active": False})
    assert only.status_code == 409 and "only active admin" in only.json()["detail"]
    assert client.patch("/api/v1/users/nobody", json={"active": False}).status_code == 404
    assert client.patch("/api/v1/users/admin", json={"active": "maybe"}).status_code == 422
    assert client.patch("/api/v1/users/admin", json={}).status_code == 422
    auth_headers(engine, "ada", "admin")
    assert client.patch("/api/v1/users/ada", json={"active": False}).status_code == 200
    # ada is deactivated: admin is again the only active admin
    assert client.patch("/api/v1/users/admin", json={"active": False}).status_code == 409


def test_the_users_page_shows_status_and_roles(client: TestClient, engine: Engine,
                                               auth_headers: Callable[..., dict[str, str]]
                                               ) -> None:
    auth_headers(engine, "olga", "operator")
    client.patch("/api/v1/users/olga", json={"active": False})
    page = client.get("/users")
    assert page.status_code == 200
    assert 'data-username="olga" class="inactive"' in page.text
    assert 'data-active="false"' in page.text and "Reactivate" in page.text
    for role in ("viewer", "operator", "admin"):
        assert f'<tr data-role="{role}">' in page.text
    assert "Manage users, connections, variables and pools" in page.text
