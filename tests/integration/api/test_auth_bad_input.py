"""Logging in, tokens, and bad credentials: each refusal is a clear JSON 401/403/413/422 (429
for too many failed logins), writes nothing, and is in the audit log."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import jwt
from api_helpers import chain_dag, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.api.auth.jwt_tokens import issue, signing_key
from statewright.config import Settings
from statewright.core.clock import utcnow

Headers = Callable[..., dict[str, str]]


def _events(client: TestClient, **params: Any) -> list[dict[str, Any]]:
    res = client.get("/api/v1/eventLogs", params=params)
    assert res.status_code == 200, res.text
    return res.json()["event_logs"]  # type: ignore[no-any-return]


def _login(c: TestClient, username: str, password: str) -> Any:
    return c.post("/api/v1/auth/token", json={"username": username, "password": password})


def test_a_jwt_from_a_password_works_until_the_password_changes(
        client: TestClient, anonymous: TestClient, auth_headers: Headers, engine: Engine) -> None:
    auth_headers(engine, "alice", "operator")
    res = _login(anonymous, "alice", "password-alice")
    assert res.status_code == 201, res.text
    token = res.json()["access_token"]
    bearer = {"Authorization": f"Bearer {token}"}
    me = anonymous.get("/api/v1/auth/me", headers=bearer).json()
    assert me["username"] == "alice" and me["role"] == "operator" and me["via"] == "jwt"
    assert "operate" in me["permissions"] and "admin" not in me["permissions"]
    changed = client.patch("/api/v1/users/alice", json={"password": "another-secret"})
    assert changed.status_code == 200
    late = anonymous.get("/api/v1/auth/me", headers=bearer)
    assert late.status_code == 401 and "password changed" in late.json()["detail"]
    assert [e["event"] for e in _events(client, owner="alice")][-1] == "auth.login"


def test_wrong_password_and_unknown_user_are_401_and_recorded(
        client: TestClient, anonymous: TestClient, auth_headers: Headers, engine: Engine) -> None:
    auth_headers(engine, "alice", "viewer")
    for username, password in (("alice", "wrong-password"), ("nobody", "password-nobody")):
        res = _login(anonymous, username, password)
        assert res.status_code == 401
        assert res.json()["detail"].startswith("Not authenticated: wrong username or password")
        assert res.headers["www-authenticate"].startswith("Bearer")
        assert "access_token" not in res.text
    failed = _events(client, event="auth.login_failed")
    assert {e["owner"] for e in failed} == {"alice", "nobody"}
    assert all(e["outcome"] == "denied" and e["client_address"] for e in failed)


def test_failed_logins_are_limited_per_user(engine: Engine, settings: Settings,
                                            auth_headers: Headers) -> None:
    auth_headers(engine, "alice", "viewer")
    app = create_app(engine=engine, settings=settings.with_overrides(
        login_max_failures_per_user=3, login_backoff_seconds=60))
    with TestClient(app) as c:
        codes = [_login(c, "alice", "wrong").status_code for _ in range(3)]
        limited = _login(c, "alice", "password-alice")  # even the right password waits
        other = _login(c, "bob", "wrong")
    assert codes == [401, 401, 401]
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) > 0
    assert "Too many failed logins" in limited.json()["detail"]
    assert other.status_code == 401  # another user is not limited by alice's failures


def test_expired_tampered_and_garbled_tokens_are_401(
        anonymous: TestClient, settings: Settings, auth_headers: Headers, engine: Engine) -> None:
    auth_headers(engine, "alice", "admin")
    key = signing_key(settings)
    expired = issue("alice", key=key, now=utcnow() - timedelta(hours=2),
                    lifetime=timedelta(hours=1))
    good = issue("alice", key=key, now=utcnow(), lifetime=timedelta(hours=1))
    claims = jwt.decode(good, options={"verify_signature": False})
    tampered = jwt.encode({**claims, "sub": "root"}, "not-the-key-" * 4, algorithm="HS256")
    ghost = issue("ghost", key=key, now=utcnow(), lifetime=timedelta(hours=1))
    cases = {expired: "expired", tampered: "signature", "abc.def": "not valid",
             ghost: "no longer exists"}
    for token, reason in cases.items():
        res = anonymous.get("/api/v1/dags", headers={"Authorization": f"Bearer {token}"})
        assert res.status_code == 401 and reason in res.json()["detail"], res.text
    basic = anonymous.get("/api/v1/dags", headers={"Authorization": "Basic YTpi"})
    assert basic.status_code == 401 and "Bearer" in basic.json()["detail"]
    assert anonymous.get("/api/v1/dags", headers={
        "Authorization": f"Bearer {good}"}).status_code == 200


def test_api_tokens_are_created_listed_and_revoked(
        anonymous: TestClient, auth_headers: Headers, engine: Engine, client: TestClient) -> None:
    viewer = auth_headers(engine, "vera", "viewer")
    made = anonymous.post("/api/v1/auth/tokens", json={"name": "grafana"}, headers=viewer)
    assert made.status_code == 201, made.text
    secret, token_id = made.json()["token"], made.json()["id"]
    assert secret.startswith("swt_") and made.json()["prefix"] == secret[:12]
    bearer = {"Authorization": f"Bearer {secret}"}
    assert anonymous.get("/api/v1/dags", headers=bearer).status_code == 200
    listed = anonymous.get("/api/v1/auth/tokens", headers=bearer).json()["tokens"]
    assert "grafana" in [t["name"] for t in listed] and "token" not in listed[0]
    revoked = anonymous.delete(f"/api/v1/auth/tokens/{token_id}", headers=bearer)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]
    res = anonymous.get("/api/v1/dags", headers=bearer)
    assert res.status_code == 401 and "revoked" in res.json()["detail"]
    again = anonymous.delete(f"/api/v1/auth/tokens/{token_id}", headers=viewer)
    assert again.status_code == 404
    denied = [e for e in _events(client, outcome="denied") if e["path"] == "/api/v1/dags"]
    assert denied and "revoked" in denied[0]["detail"]


def test_a_viewer_calling_a_write_route_is_403_and_nothing_changes(
        anonymous: TestClient, auth_headers: Headers, engine: Engine, client: TestClient,
        snapshot: Callable[[], tuple[int, int, int]]) -> None:
    store_dag(engine, chain_dag("d1", 2))
    viewer = auth_headers(engine, "vera", "viewer")
    before = snapshot()
    res = anonymous.post("/api/v1/dags/d1/dagRuns", json={}, headers=viewer)
    assert res.status_code == 403
    assert res.json()["detail"] == ("Forbidden: POST /api/v1/dags/d1/dagRuns needs the role "
                                    "operator or higher; 'vera' is viewer. Nothing was changed.")
    assert snapshot() == before
    event = _events(client, dag_id="d1")[0]
    assert (event["owner"], event["event"], event["outcome"], event["status_code"]) == (
        "vera", "trigger", "denied", 403)
    assert event["target"] == "dag_id=d1"


def test_an_operator_changes_states_as_a_person(
        anonymous: TestClient, auth_headers: Headers, engine: Engine, client: TestClient) -> None:
    store_dag(engine, chain_dag("d1", 2))
    op = auth_headers(engine, "olga", "operator")
    assert anonymous.post("/api/v1/dags/d1/dagRuns", json={"dag_run_id": "r1"},
                          headers=op).status_code == 200
    history = anonymous.get("/api/v1/dags/d1/dagRuns/r1/history", headers=op).json()
    assert {h["actor"] for h in history["transitions"]} == {"user:olga"}
    assert anonymous.post("/api/v1/users", json={"username": "x", "password": "12345678"},
                          headers=op).status_code == 403
    event = _events(client, owner="olga", dag_id="d1")[0]
    assert (event["event"], event["outcome"], event["method"]) == ("trigger", "success", "POST")


def test_an_oversized_body_is_413_and_recorded(
        engine: Engine, settings: Settings, auth_headers: Headers, client: TestClient,
        snapshot: Callable[[], tuple[int, int, int]]) -> None:
    store_dag(engine, chain_dag("d1", 2))
    app = create_app(engine=engine, settings=settings.with_overrides(api_max_body_bytes=1000))
    before = snapshot()
    with TestClient(app, headers=auth_headers(engine, "olga", "operator")) as c:
        res = c.post("/api/v1/dags/d1/dagRuns", json={"conf": {"blob": "x" * 5000}})

        def chunks() -> Any:
            yield b'{"conf": {"blob": "'
            for _ in range(10):
                yield b"x" * 500
            yield b'"}}'

        streamed = c.post("/api/v1/dags/d1/dagRuns", content=chunks(),
                          headers={"Content-Type": "application/json"})
        small = c.post("/api/v1/dags/d1/dagRuns", json={"dag_run_id": "ok"})
    assert res.status_code == 413 and "larger than 1000 bytes" in res.json()["detail"]
    assert streamed.status_code == 413 and "larger than 1000 bytes" in streamed.json()["detail"]
    assert small.status_code == 200
    assert snapshot()[0] == before[0] + 1  # only the small run
    outcomes = [(e["status_code"], e["outcome"]) for e in _events(client, dag_id=None)]
    assert (413, "failed") in outcomes


def test_bad_user_input_is_422_or_409(client: TestClient) -> None:
    short = client.post("/api/v1/users", json={"username": "bob", "password": "short"})
    assert short.status_code == 422 and "password" in short.json()["detail"]
    badname = client.post("/api/v1/users", json={"username": "b b", "password": "12345678"})
    assert badname.status_code == 422 and "not allowed" in badname.json()["detail"]
    role = client.post("/api/v1/users", json={"username": "bob", "password": "12345678",
                                              "role": "root"})
    assert role.status_code == 422
    assert client.post("/api/v1/users", json={"username": "bob", "password": "12345678"}
                       ).status_code == 201
    dup = client.post("/api/v1/users", json={"username": "bob", "password": "12345678"})
    assert dup.status_code == 409 and "exists already" in dup.json()["detail"]
    last = client.patch("/api/v1/users/admin", json={"role": "viewer"})
    assert last.status_code == 409 and "only admin" in last.json()["detail"]
    assert client.delete("/api/v1/users/nobody").status_code == 404
    assert client.delete("/api/v1/users/bob").json()["username"] == "bob"
    users = [u["username"] for u in client.get("/api/v1/users").json()["users"]]
    assert users == ["admin"]


def test_a_long_username_fits_in_the_history(
        anonymous: TestClient, auth_headers: Headers, engine: Engine) -> None:
    name = "a" * 64  # the longest username: user:<64 characters> as actor and triggered_by
    store_dag(engine, chain_dag("d1", 1))
    headers = auth_headers(engine, name, "operator")
    res = anonymous.post("/api/v1/dags/d1/dagRuns", json={"dag_run_id": "r1"}, headers=headers)
    assert res.status_code == 200 and res.json()["triggered_by"] == f"user:{name}"
