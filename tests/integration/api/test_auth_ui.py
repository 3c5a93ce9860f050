"""The web UI's login: the form, the session cookie, CSRF on every state-changing request,
logout, the user in the header, controls hidden for viewers, the audit log page, the CSP."""

from __future__ import annotations

import re
from collections.abc import Callable

from api_helpers import chain_dag, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.api.auth.hardening import CSP
from statewright.config import Settings

Headers = Callable[..., dict[str, str]]


def _log_in(c: TestClient, username: str, password: str, next_url: str = "/") -> object:
    return c.post("/login", data={"username": username, "password": password, "next": next_url},
                  follow_redirects=False)


def _csrf(page: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([0-9a-f]*)">', page)
    assert found is not None
    return found.group(1)


def test_login_sets_a_safe_session_cookie_and_the_header_shows_the_user(
        anonymous: TestClient, auth_headers: Headers, engine: Engine) -> None:
    auth_headers(engine, "olga", "operator")
    first = anonymous.get("/dags/x", follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/login?next=%2Fdags%2Fx"
    res = _log_in(anonymous, "olga", "password-olga", "/import-errors")
    assert res.status_code == 303 and res.headers["location"] == "/import-errors"  # type: ignore[attr-defined]
    cookie = res.headers["set-cookie"]  # type: ignore[attr-defined]
    assert cookie.startswith("statewright_session=sws_")
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Secure" not in cookie
    page = anonymous.get("/").text
    assert '<span class="who" id="user-name" title="Signed in">olga</span>' in page
    assert 'id="user-role" title="Your role">operator<' in page
    assert 'data-role="operator"' in page and len(_csrf(page)) == 64
    assert "/event-logs" not in page  # the audit log is for admins


def test_a_wrong_password_shows_the_form_again(anonymous: TestClient, auth_headers: Headers,
                                               engine: Engine) -> None:
    auth_headers(engine, "olga", "operator")
    res = _log_in(anonymous, "olga", "nope")
    assert res.status_code == 401  # type: ignore[attr-defined]
    assert "Wrong username or password." in res.text  # type: ignore[attr-defined]
    assert "set-cookie" not in res.headers  # type: ignore[attr-defined]
    for target in ("https://evil.example/", "//evil.example/x"):  # never an open redirect
        res = _log_in(anonymous, "olga", "password-olga", target)
        assert res.headers["location"] == "/"  # type: ignore[attr-defined]


def test_writes_with_the_cookie_need_the_csrf_token(
        anonymous: TestClient, auth_headers: Headers, engine: Engine, client: TestClient,
        snapshot: Callable[[], tuple[int, int, int]]) -> None:
    store_dag(engine, chain_dag("d1", 2))
    auth_headers(engine, "olga", "operator")
    _log_in(anonymous, "olga", "password-olga")
    token = _csrf(anonymous.get("/").text)
    before = snapshot()
    missing = anonymous.post("/api/v1/dags/d1/dagRuns", json={})
    wrong = anonymous.post("/api/v1/dags/d1/dagRuns", json={}, headers={"X-CSRF-Token": "0" * 64})
    assert missing.status_code == wrong.status_code == 403
    assert "CSRF token" in missing.json()["detail"]
    assert snapshot() == before
    assert anonymous.get("/api/v1/dags/d1").status_code == 200  # reads need no token
    ok = anonymous.post("/api/v1/dags/d1/dagRuns", json={"dag_run_id": "r1"},
                        headers={"X-CSRF-Token": token})
    assert ok.status_code == 200 and ok.json()["triggered_by"] == "user:olga"
    denied = client.get("/api/v1/eventLogs", params={"owner": "olga", "outcome": "denied"})
    assert [e["status_code"] for e in denied.json()["event_logs"]] == [403, 403]


def test_logout_ends_the_session(anonymous: TestClient, auth_headers: Headers,
                                 engine: Engine) -> None:
    auth_headers(engine, "olga", "operator")
    _log_in(anonymous, "olga", "password-olga")
    cookie = anonymous.cookies.get("statewright_session")
    token = _csrf(anonymous.get("/").text)
    assert anonymous.post("/logout", follow_redirects=False).status_code == 403  # no token
    out = anonymous.post("/logout", data={"csrf_token": token}, follow_redirects=False)
    assert out.status_code == 303 and out.headers["location"] == "/login"
    assert "statewright_session" not in anonymous.cookies
    anonymous.cookies.set("statewright_session", cookie or "")
    again = anonymous.get("/api/v1/dags")
    assert again.status_code == 401 and "not known" in again.json()["detail"]


def test_a_viewer_sees_no_controls_and_no_admin_page(
        anonymous: TestClient, auth_headers: Headers, engine: Engine) -> None:
    store_dag(engine, chain_dag("d1", 2))
    auth_headers(engine, "vera", "viewer")
    _log_in(anonymous, "vera", "password-vera")
    page = anonymous.get("/dags/d1").text
    assert 'data-role="viewer"' in page
    css = anonymous.get("/static/auth.css").text
    assert 'body[data-role="viewer"]' in css and "#dag-trigger" in css and "#run-actions" in css
    forbidden = anonymous.get("/event-logs")
    assert forbidden.status_code == 403 and "needs the role admin" in forbidden.text


def test_the_audit_log_page_filters_by_dag_and_user(
        client: TestClient, anonymous: TestClient, auth_headers: Headers,
        engine: Engine) -> None:
    for dag_id in ("d1", "d2"):
        store_dag(engine, chain_dag(dag_id, 1))
    olga = auth_headers(engine, "olga", "operator")
    vera = auth_headers(engine, "vera", "viewer")
    anonymous.post("/api/v1/dags/d1/dagRuns", json={}, headers=olga)
    anonymous.post("/api/v1/dags/d2/dagRuns", json={}, headers=vera)
    _log_in(anonymous, "admin", "password-admin")
    page = anonymous.get("/event-logs", params={"dag_id": "d1"}).text
    assert "olga" in page and "vera" not in page.split("<tbody>")[1].split("</tbody>")[0]
    page = anonymous.get("/event-logs", params={"owner": "vera"}).text
    rows = page.split("<tbody>")[1].split("</tbody>")[0]  # (not the scripts' versions)
    assert "d2" in rows and "denied" in rows and "d1" not in rows


def test_every_answer_carries_a_csp_without_inline_scripts(anonymous: TestClient) -> None:
    for path in ("/login", "/api/v1/health", "/static/app.js", "/nowhere"):
        res = anonymous.get(path)
        assert res.headers["content-security-policy"] == CSP
        assert res.headers["x-frame-options"] == "DENY"
    assert "script-src 'self';" in CSP and "unsafe-inline" not in CSP
    login = anonymous.get("/login").text
    assert not re.search(r"<script(?![^>]*\b(src|type=\"application/json\"))", login)
    assert not re.search(r"\son[a-z]+=", login)


def test_cors_is_closed_unless_configured(anonymous: TestClient) -> None:
    res = anonymous.get("/api/v1/health", headers={"Origin": "https://elsewhere.example"})
    assert "access-control-allow-origin" not in res.headers


def test_cors_opens_for_configured_origins_only(engine: Engine, settings: Settings) -> None:
    app = create_app(engine=engine, settings=settings.with_overrides(
        api_cors_origins=("https://dash.example",)))
    with TestClient(app) as c:
        ok = c.get("/api/v1/health", headers={"Origin": "https://dash.example"})
        other = c.get("/api/v1/health", headers={"Origin": "https://elsewhere.example"})
    assert ok.headers["access-control-allow-origin"] == "https://dash.example"
    assert "access-control-allow-origin" not in other.headers
    assert settings.api_host == "127.0.0.1"  # the server binds loopback unless configured
