"""``statewright api-server`` serves the API and the UI; a port in use is a clear error."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from statewright.cli.main import cli


def _env(tmp_path: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEWRIGHT_")}
    env.update(STATEWRIGHT_HOME=str(tmp_path / "home"),
               STATEWRIGHT_DAGS_FOLDER=str(tmp_path / "dags"), STATEWRIGHT_API_PORT=str(port))
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_api_server_command_serves_the_api_and_the_ui(tmp_path: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "statewright.cli.main", "api-server", "--port", str(port)],
        env=_env(tmp_path, 1), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120  # ends a wait for a server that never starts
        health = None
        while time.monotonic() < deadline:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=30)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert health is not None and health.status_code == 200, "the server did not answer"
        assert health.json()["metadatabase"]["status"] == "healthy"
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=60)
        assert page.status_code == 303 and page.headers["location"] == "/login?next=%2F"
        login = httpx.get(f"http://127.0.0.1:{port}/login", timeout=60)
        assert login.status_code == 200 and "statewright" in login.text
        _nothing_but_health_and_login_answers_without_credentials(f"http://127.0.0.1:{port}")
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=60)
    assert f"http://127.0.0.1:{port}/" in out


def _nothing_but_health_and_login_answers_without_credentials(url: str) -> None:
    """Every operation of the OpenAPI document, and the UI pages, asked of the running server
    with no credentials: only the health check and the login routes answer 2xx."""
    from statewright.api import create_app
    from statewright.config import load_settings

    doc = create_app(settings=load_settings({"STATEWRIGHT_HOME": "/nonexistent"})).openapi()
    answered = {}
    for path, item in doc["paths"].items():
        for method in item:
            concrete = path
            for name in ("dag_id", "run_id", "task_id", "username"):
                concrete = concrete.replace("{" + name + "}", "x")
            concrete = re.sub(r"\{[^}]+\}", "1", concrete)  # ids, numbers, map indexes
            res = httpx.request(method.upper(), url + concrete, json={}, timeout=60)
            answered[(method.upper(), path)] = res.status_code
    for page in ("/", "/dags/x", "/import-errors", "/event-logs", "/api/docs",
                 "/api/v1/openapi.json", "/metrics"):
        answered[("GET", page)] = httpx.get(url + page, timeout=60).status_code
    public = {("GET", "/api/v1/health"), ("POST", "/api/v1/auth/token"),
              # Airflow 3's API answers these without credentials too (its clients rely on it)
              ("GET", "/api/v2/version"), ("GET", "/api/v2/monitor/health"),
              ("POST", "/auth/token"), ("POST", "/auth/token/cli")}
    opened = {k: v for k, v in answered.items() if 200 <= v < 300}
    assert set(opened) <= public, opened
    assert answered[("POST", "/api/v1/auth/token")] == 422  # {} is not a login
    assert all(v in (401, 303) for k, v in answered.items() if k not in public), answered


def test_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        res = CliRunner().invoke(cli, ["api-server", "--port", str(port)],
                                 env=_env(tmp_path, port))
    assert res.exit_code == 1
    assert f"Cannot serve the API on 127.0.0.1:{port}" in res.output
    assert "STATEWRIGHT_API_PORT" in res.output
