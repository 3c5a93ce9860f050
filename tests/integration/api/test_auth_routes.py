"""Every operation of the OpenAPI document: 401 without credentials, 403 for a role too small for
the permission the route declares (or its method implies), and never 401/403 for a role that
holds it. The table is read from the document, so a new route is checked without a new test."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.config import Settings
from statewright.core.auth import Permission, Role, allows, permission_for_method

_SAMPLE = {"try_number": "1", "token_id": "999999", "map_index": "0"}


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, Permission]]:
    ops = []
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            ops.append((method.upper(), path, Permission(operation["x-permission"])))
    return ops


def _concrete(path: str) -> str:
    for name, value in _SAMPLE.items():
        path = path.replace("{" + name + "}", value)
    while "{" in path:
        start = path.index("{")
        path = path[:start] + "nothing_here" + path[path.index("}") + 1:]
    return path


def test_every_operation_states_its_permission(settings: Settings) -> None:
    doc = create_app(settings=settings).openapi()
    ops = _operations(doc)
    assert len(ops) > 20
    by_path = {(m, p): perm for m, p, perm in ops}
    assert by_path[("GET", "/api/v1/health")] is Permission.PUBLIC
    assert by_path[("POST", "/api/v1/auth/token")] is Permission.PUBLIC
    assert by_path[("POST", "/api/v1/dags/{dag_id}/dagRuns")] is Permission.OPERATE
    assert by_path[("GET", "/api/v1/users")] is Permission.ADMIN
    assert by_path[("GET", "/api/v1/eventLogs")] is Permission.ADMIN
    public = {(m, p) for m, p, perm in ops if perm is Permission.PUBLIC}
    assert public == {("GET", "/api/v1/health"), ("POST", "/api/v1/auth/token"),
                      ("POST", "/auth/token"), ("POST", "/auth/token/cli"),
                      ("GET", "/api/v2/version"),
                      ("GET", "/api/v2/monitor/health")}  # Airflow's, public there too
    for path in ("/api/v2/connections", "/api/v2/variables/{variable_key}", "/api/v2/eventLogs"):
        assert by_path[("GET", path)] is Permission.ADMIN


def test_a_route_that_declares_nothing_needs_read_or_operate() -> None:
    assert permission_for_method("GET") is Permission.READ
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        assert permission_for_method(method) is Permission.OPERATE
        assert not allows(Role.VIEWER, permission_for_method(method))


def test_every_route_answers_401_without_and_403_with_a_small_role(
        engine: Engine, settings: Settings, auth_headers: Callable[..., dict[str, str]]) -> None:
    # the configuration shown, so that /api/v2/config's 403 can only come from the role
    settings = dataclasses.replace(settings, expose_config="true")
    app = create_app(engine=engine, settings=settings)
    headers = {role: auth_headers(engine, role.value, role.value) for role in Role}
    checked = 0
    with TestClient(app) as client:
        for method, path, perm in _operations(app.openapi()):
            url = _concrete(path)
            anonymous = client.request(method, url, json={})
            if perm is Permission.PUBLIC:
                assert anonymous.status_code not in (401, 403), (method, path)
                continue
            assert anonymous.status_code == 401, (method, path, anonymous.text)
            assert anonymous.json()["detail"].startswith("Not authenticated")
            if path.endswith("/events/stream"):
                continue  # endless: a viewer's stream is read over a server in test_live_events_api
            for role in Role:
                res = client.request(method, url, json={}, headers=headers[role])
                if allows(role, perm):
                    assert res.status_code not in (401, 403), (method, path, role, res.text)
                else:
                    assert res.status_code == 403, (method, path, role, res.text)
                    assert "needs the role" in res.json()["detail"]
                checked += 1
    assert checked >= 60


@pytest.mark.parametrize("page", ["/", "/dags/x", "/import-errors", "/event-logs",
                                  "/api/docs", "/api/v1/openapi.json", "/metrics"])
def test_pages_docs_and_metrics_need_a_login_too(anonymous: TestClient, page: str) -> None:
    res = anonymous.get(page, follow_redirects=False)
    if page.startswith(("/api/", "/metrics")):
        assert res.status_code == 401
    else:
        assert res.status_code == 303 and res.headers["location"].startswith("/login?next=")


def test_a_new_route_that_declares_nothing_is_safe_by_default(
        engine: Engine, settings: Settings, auth_headers: Callable[..., dict[str, str]]) -> None:
    """Routes added later (as other capabilities will) get the derived permission."""
    from fastapi import APIRouter

    app = create_app(engine=engine, settings=settings)
    router = APIRouter()

    @router.get("/things")
    def things() -> dict[str, str]:
        return {"ok": "read"}

    @router.post("/things")
    def make_thing() -> dict[str, str]:
        return {"ok": "made"}

    @router.get("/variables")
    def variables() -> dict[str, str]:
        return {"ok": "secret"}

    app.include_router(router, prefix="/api/v1")
    app.openapi_schema = None
    ops = {(m, p): perm for m, p, perm in _operations(app.openapi())}
    assert ops[("GET", "/api/v1/things")] is Permission.READ
    assert ops[("POST", "/api/v1/things")] is Permission.OPERATE
    assert ops[("GET", "/api/v1/variables")] is Permission.ADMIN
    viewer, operator, admin = (auth_headers(engine, r, r) for r in ("viewer", "operator",
                                                                      "admin"))
    with TestClient(app) as c:
        assert c.get("/api/v1/things").status_code == 401
        assert c.get("/api/v1/things", headers=viewer).status_code == 200
        assert c.post("/api/v1/things", headers=viewer).status_code == 403
        assert c.post("/api/v1/things", headers=operator).status_code == 200
        assert c.get("/api/v1/variables", headers=operator).status_code == 403
        assert c.get("/api/v1/variables", headers=admin).status_code == 200
