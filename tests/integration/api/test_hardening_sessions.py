"""Sessions and tokens (issue 36, part 5): a password or role change ends the user's UI sessions
and JWTs (API tokens when asked), an admin ends anyone's sign-ins and revokes tokens from the
API, the UI and the CLI, API tokens expire by default, and a cross-site login post is refused."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.config import Settings
from statewright.core.clock import utcnow

Headers = Callable[..., dict[str, str]]


def _session(app: Any, username: str) -> TestClient:
    """A client holding ``username``'s web UI session (the cookie)."""
    c = TestClient(app)
    res = c.post("/login", data={"username": username, "password": f"password-{username}"},
                 follow_redirects=False)
    assert res.status_code == 303, res.text
    return c


def _jwt(c: TestClient, username: str) -> dict[str, str]:
    res = c.post("/api/v1/auth/token", json={"username": username,
                                             "password": f"password-{username}"})
    assert res.status_code == 201, res.text
    return {"Authorization": f"Bearer {res.json()['access_token']}"}


def _signed_in(c: TestClient, headers: dict[str, str] | None = None) -> bool:
    res = c.get("/api/v1/auth/me", headers=headers or {})
    assert res.status_code in (200, 401), res.text
    return res.status_code == 200


@pytest.mark.parametrize("change", [{"password": "a-new-password"}, {"role": "operator"}])
def test_a_password_or_role_change_ends_sessions_and_jwts_but_not_api_tokens(
        change: dict[str, str], engine: Engine, settings: Settings, client: TestClient,
        anonymous: TestClient, auth_headers: Headers) -> None:
    token = auth_headers(engine, "vera", "viewer")
    app = create_app(engine=engine, settings=settings)
    browser, jwt = _session(app, "vera"), _jwt(anonymous, "vera")
    assert _signed_in(browser) and _signed_in(anonymous, jwt)
    assert client.patch("/api/v1/users/vera", json=change).status_code == 200
    assert not _signed_in(browser)  # today: the UI session went on
    assert not _signed_in(anonymous, jwt)
    assert _signed_in(anonymous, token)  # API tokens stay unless asked
    client.patch("/api/v1/users/vera", json={**change, "revoke_api_tokens": True})
    res = anonymous.get("/api/v1/auth/me", headers=token)
    assert res.status_code == 401 and "revoked" in res.json()["detail"]


def test_an_admin_ends_another_user_s_sign_ins(
        engine: Engine, settings: Settings, client: TestClient, anonymous: TestClient,
        auth_headers: Headers) -> None:
    token = auth_headers(engine, "vera", "viewer")
    app = create_app(engine=engine, settings=settings)
    browser, jwt = _session(app, "vera"), _jwt(anonymous, "vera")
    res = client.post("/api/v1/users/vera/endSessions", json={})
    assert res.status_code == 200, res.text
    assert res.json() == {"username": "vera", "sessions_ended": 1, "api_tokens_revoked": 0}
    assert not _signed_in(browser) and not _signed_in(anonymous, jwt)
    assert _signed_in(anonymous, token)
    listed = client.get("/api/v1/users/vera/tokens").json()["tokens"]
    assert [t["name"] for t in listed] == ["tests"] and "token" not in listed[0]
    res = client.post("/api/v1/users/vera/endSessions", json={"revoke_api_tokens": True})
    assert res.json()["api_tokens_revoked"] == 1 and not _signed_in(anonymous, token)
    assert client.post("/api/v1/users/nobody/endSessions", json={}).status_code == 404
    viewer = anonymous.post("/api/v1/users/vera/endSessions", json={}, headers=token)
    assert viewer.status_code == 401
    again = _jwt(anonymous, "vera")  # signing in again works
    assert _signed_in(anonymous, again)


def _csrf(page: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([0-9a-f]*)">', page)
    assert found is not None
    return found.group(1)


def test_the_users_page_ends_sign_ins_and_revokes_tokens(
        engine: Engine, settings: Settings, anonymous: TestClient,
        auth_headers: Headers) -> None:
    token = auth_headers(engine, "vera", "viewer")
    auth_headers(engine, "ada", "admin")
    app = create_app(engine=engine, settings=settings)
    victim, admin = _session(app, "vera"), _session(app, "ada")
    page = admin.get("/users")
    assert page.status_code == 200
    assert 'action="/users/vera/end-sessions"' in page.text
    csrf = _csrf(page.text)
    refused = admin.post("/users/vera/end-sessions", data={}, follow_redirects=False)
    assert refused.status_code == 403 and _signed_in(victim)  # the CSRF token is needed
    done = admin.post("/users/vera/end-sessions", data={"csrf_token": csrf},
                      follow_redirects=False)
    assert done.status_code == 303 and not _signed_in(victim)
    token_id = re.findall(r'action="/users/tokens/(\d+)/revoke"', admin.get("/users").text)
    assert token_id
    for pk in token_id:
        admin.post(f"/users/tokens/{pk}/revoke", data={"csrf_token": csrf})
    assert not _signed_in(anonymous, token)
    assert _session(app, "vera").get("/users").status_code == 403  # viewers: no users page


def test_api_tokens_expire_after_the_default_unless_told(
        client: TestClient, settings: Settings, engine: Engine) -> None:
    made = client.post("/api/v1/auth/tokens", json={"name": "grafana"}).json()
    from datetime import datetime

    expires = datetime.fromisoformat(made["expires_at"])
    assert abs(expires - (utcnow() + timedelta(days=90))) < timedelta(minutes=1)
    short = client.post("/api/v1/auth/tokens", json={"name": "a", "expires_in_days": 7}).json()
    assert abs(datetime.fromisoformat(short["expires_at"]) - (utcnow() + timedelta(days=7))
               ) < timedelta(minutes=1)
    forever = client.post("/api/v1/auth/tokens", json={"name": "b", "expires_in_days": 0})
    assert forever.json()["expires_at"] is None


def test_the_cli_ends_sign_ins_lists_and_revokes_tokens(
        engine: Engine, tmp_path: Path, cli_run: Callable[..., Any], anonymous: TestClient,
        auth_headers: Headers) -> None:
    token = auth_headers(engine, "vera", "viewer")
    env = {"STATEWRIGHT_HOME": str(tmp_path / "home"), "COLUMNS": "200",
           "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False)}
    jwt = _jwt(anonymous, "vera")
    res = cli_run(env, "users", "end-sessions", "vera")
    assert res.exit_code == 0, res.output
    assert "API tokens still work" in res.output
    assert not _signed_in(anonymous, jwt) and _signed_in(anonymous, token)
    made = cli_run(env, "users", "create-token", "vera", "--name", "ci")
    assert made.exit_code == 0 and "valid 90 days" in made.output
    never = cli_run(env, "users", "create-token", "vera", "--name", "pg", "--expires", "never")
    assert "valid until revoked" in never.output
    bad = cli_run(env, "users", "create-token", "vera", "--name", "x", "--expires", "soon")
    assert bad.exit_code == 2 and "number of days" in bad.output
    listed = cli_run(env, "users", "tokens", "vera", "-o", "json")
    import json

    rows = json.loads(listed.output)
    assert {r["name"] for r in rows} == {"tests", "ci", "pg"}
    assert {r["name"]: r["expires"] for r in rows}["pg"] == "never"
    first = next(r["id"] for r in rows if r["name"] == "tests")
    assert cli_run(env, "users", "revoke-token", str(first)).exit_code == 0
    assert not _signed_in(anonymous, token)
    ended = cli_run(env, "users", "set-role", "vera", "operator", "--revoke-api-tokens")
    assert ended.exit_code == 0 and "API tokens were revoked" in ended.output


@pytest.mark.parametrize("headers", [
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
    {"Origin": "https://evil.example"},
    {"Origin": "null"},
])
def test_a_cross_site_login_post_is_refused(headers: dict[str, str], anonymous: TestClient,
                                            auth_headers: Headers, engine: Engine) -> None:
    auth_headers(engine, "vera", "viewer")
    res = anonymous.post("/login", data={"username": "vera", "password": "password-vera"},
                         headers=headers, follow_redirects=False)
    assert res.status_code == 403 and "set-cookie" not in res.headers
    assert "sent from another site" in res.text


@pytest.mark.parametrize("headers", [
    {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"},
    {"Origin": "http://testserver"},
    {"Origin": "https://public.example", "Sec-Fetch-Site": "same-origin"},  # a proxy's Host
    {},
])
def test_a_same_origin_login_post_is_accepted(headers: dict[str, str], anonymous: TestClient,
                                              auth_headers: Headers, engine: Engine) -> None:
    auth_headers(engine, "vera", "viewer")
    res = anonymous.post("/login", data={"username": "vera", "password": "password-vera"},
                         headers=headers, follow_redirects=False)
    assert res.status_code == 303 and res.headers["set-cookie"].startswith("statewright_session")
