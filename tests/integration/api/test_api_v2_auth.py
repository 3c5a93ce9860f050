"""/api/v2 and POST /auth/token keep statewright's roles and audit: a token from Airflow's
route (JSON or form) is a Bearer for /api/v2; viewers read, operators change states, admins
alone read connections and variables and change pools; every change is in the audit log;
an Airflow filter not served yet answers 400 rather than an unfiltered page."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.config import Settings

ROLES = {"vera": "viewer", "otto": "operator", "ada": "admin"}


@pytest.fixture
def anyone(engine: Engine, settings: Settings,
           auth_headers: Callable[..., dict[str, str]]) -> Iterator[TestClient]:
    """A client without credentials; ``c.bearer[name]``: an API token's header per user."""
    with TestClient(create_app(engine=engine, settings=settings)) as c:
        c.bearer = {name: auth_headers(engine, name, role)  # type: ignore[attr-defined]
                    for name, role in ROLES.items()}
        yield c


def _bearer(c: TestClient, name: str) -> dict[str, str]:
    return c.bearer[name]  # type: ignore[attr-defined,no-any-return]


def test_tokens_at_auth_token_as_json_or_form(anyone: TestClient) -> None:
    form = anyone.post("/auth/token", data={"username": "ada", "password": "password-ada"})
    assert form.status_code == 201 and form.json()["access_token"]
    as_json = anyone.post("/auth/token", json={"username": "vera", "password": "password-vera"})
    jwt = {"Authorization": f"Bearer {as_json.json()['access_token']}"}
    wrong = anyone.post("/auth/token", json={"username": "ada", "password": "nope"})
    assert wrong.status_code == 401 and "wrong username or password" in wrong.json()["detail"]
    missing = anyone.post("/auth/token", json={"username": "ada"})
    assert missing.status_code == 422 and "password" in missing.json()["detail"]
    assert anyone.get("/api/v2/dags").status_code == 401
    assert anyone.get("/api/v2/dags", headers=jwt).json() == {"dags": [], "total_entries": 0}
    assert anyone.patch("/api/v2/dags/nope", json={"is_paused": True},
                        headers=jwt).status_code == 403


def test_version_and_health_are_public(anyone: TestClient) -> None:
    assert anyone.get("/api/v2/version").json()["version"]
    health = anyone.get("/api/v2/monitor/health").json()
    assert health["metadatabase"] == {"status": "healthy"}


CASES = [
    ("vera", "GET", "/api/v2/pools", 200),
    ("vera", "GET", "/api/v2/connections", 403),
    ("vera", "GET", "/api/v2/variables/region", 403),
    ("vera", "PATCH", "/api/v2/dags/nope", 403),
    ("otto", "PATCH", "/api/v2/dags/nope", 404),
    ("otto", "POST", "/api/v2/pools", 403),
    ("otto", "DELETE", "/api/v2/pools/default_pool", 403),
    ("otto", "GET", "/api/v2/eventLogs", 403),
    ("ada", "GET", "/api/v2/connections", 200),
    ("ada", "GET", "/api/v2/eventLogs", 200),
]


def test_roles_apply_to_api_v2(anyone: TestClient) -> None:
    for user, method, path, status in CASES:
        body = {"is_paused": True} if method == "PATCH" else {"name": "p", "slots": 1}
        kwargs = {"json": body} if method in ("PATCH", "POST") else {}
        answer = anyone.request(method, path, headers=_bearer(anyone, user), **kwargs)
        assert answer.status_code == status, (user, method, path, answer.text)
        if status >= 400:
            assert isinstance(answer.json()["detail"], str)


def test_changes_through_api_v2_are_audited(anyone: TestClient) -> None:
    admin = _bearer(anyone, "ada")
    assert anyone.post("/api/v2/pools", json={"name": "etl", "slots": 2},
                       headers=admin).status_code == 201
    refused = anyone.delete("/api/v2/pools/etl", headers=_bearer(anyone, "otto"))
    assert refused.status_code == 403
    logs = anyone.get("/api/v2/eventLogs", headers=admin).json()["event_logs"]
    mine = [(e["event"], e["owner"]) for e in logs if "/api/v2/pools" in (e["extra"] or "")]
    assert ("post_pool", "ada") in mine and ("delete_pool", "otto") in mine


def test_an_airflow_filter_not_served_yet_is_refused(anyone: TestClient) -> None:
    answer = anyone.get("/api/v2/dags?owners=ops&limit=5", headers=_bearer(anyone, "vera"))
    assert answer.status_code == 400
    assert "owners" in answer.json()["detail"] and "limit" in answer.json()["detail"]
    ranged = anyone.post("/api/v2/dags/nope/clearTaskInstances", headers=_bearer(anyone, "otto"),
                         json={"dry_run": True, "include_past": True, "dag_run_id": "r"})
    assert ranged.status_code == 400 and "include_past" in ranged.json()["detail"]
    missing = anyone.get("/api/v2/dags/nope", headers=_bearer(anyone, "vera"))
    assert missing.status_code == 404 and "nope" in missing.json()["detail"]
