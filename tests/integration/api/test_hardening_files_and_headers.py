"""From issue 36's low findings: the log API never shows the server's absolute log path, and a
500 answer carries the security headers like every other answer."""

from __future__ import annotations

from collections.abc import Callable

from api_helpers import run_url
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.api.auth.hardening import CSP, HEADERS
from statewright.config import Settings


def test_the_log_api_shows_the_path_under_the_logs_folder_only(
        client: TestClient, failed_run: tuple[str, str], settings: Settings) -> None:
    dag_id, run_id = failed_run
    log = client.get(run_url(dag_id, run_id) + "/taskInstances/extract/logs/1").json()
    assert "about to read the orders" in log["content"]
    assert not log["path"].startswith("/") and str(settings.logs_folder) not in log["path"]
    assert (settings.logs_folder / log["path"]).is_file()
    assert log["path"].endswith("attempt=1.log")


def test_a_500_answer_carries_the_security_headers(
        engine: Engine, settings: Settings, auth_headers: Callable[..., dict[str, str]]) -> None:
    app = create_app(engine=engine, settings=settings)

    @app.get("/api/v1/boom")
    def boom() -> None:
        raise RuntimeError("an unexpected failure with a secret inside")

    with TestClient(app, raise_server_exceptions=False,
                    headers=auth_headers(engine)) as c:
        res = c.get("/api/v1/boom")
    assert res.status_code == 500
    assert res.headers["content-security-policy"] == CSP
    for key, value in HEADERS.items():
        assert res.headers[key] == value
    assert "secret" not in res.text and res.json()["detail"].startswith("Internal server error")
