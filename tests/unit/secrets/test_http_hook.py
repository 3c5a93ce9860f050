"""HttpHook, and HttpSensor / HttpTrigger with http_conn_id, against a local HTTP server."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from statewright.sdk import DAG, secrets
from statewright.sdk.hooks import HttpHook
from statewright.sdk.sensors import HttpSensor
from statewright.sdk.triggers import HttpTrigger


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append({"path": self.path, "headers": dict(self.headers)})
            status = 200 if self.path.startswith("/ready") else 404
            body = json.dumps({"path": self.path}).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("STATEWRIGHT_CONN_API", json.dumps({
        "conn_type": "http", "host": "127.0.0.1", "port": httpd.server_address[1],
        "login": "user", "password": "pw-http-1", "extra": {"X-Api-Version": "2"}}))
    secrets.clear_cache()
    try:
        yield seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def _auth(request: dict[str, Any]) -> str:
    return base64.b64decode(request["headers"]["Authorization"].split()[1]).decode()


def test_http_hook_builds_the_url_auth_and_headers(server: list[dict[str, Any]]) -> None:
    hook = HttpHook(method="GET", http_conn_id="api")
    response = hook.run("ready/now", data={"q": "1"})
    assert response.json() == {"path": "/ready/now?q=1"}
    assert _auth(server[-1]) == "user:pw-http-1"
    assert server[-1]["headers"]["X-Api-Version"] == "2"
    with pytest.raises(RuntimeError, match="HTTP 404"):
        hook.run("missing")
    assert hook.test_connection()[0] is False  # "/" answers 404
    with pytest.raises(secrets.ConnectionNotFound, match="nope"):
        HttpHook(http_conn_id="nope").run("x")


def test_http_sensor_with_a_connection(server: list[dict[str, Any]]) -> None:
    with DAG("d"):
        ready = HttpSensor(task_id="ready", http_conn_id="api", endpoint="ready")
        absent = HttpSensor(task_id="absent", http_conn_id="api", endpoint="absent")
    assert ready.poke({}) is True and _auth(server[-1]) == "user:pw-http-1"
    assert absent.poke({}) is False  # 404 is "not yet"
    with pytest.raises(ValueError, match="give url, or http_conn_id"), DAG("e"):
        HttpSensor(task_id="neither")


def test_http_trigger_reads_the_connection_when_it_runs(server: list[dict[str, Any]]) -> None:
    trigger = HttpTrigger(http_conn_id="api", endpoint="ready", poke_interval=0.05)
    _, kwargs = trigger.serialize()
    assert kwargs["http_conn_id"] == "api" and "pw-http-1" not in json.dumps(kwargs)
    again = HttpTrigger(**kwargs)

    async def first() -> Any:
        events = again.run()
        try:
            return await asyncio.wait_for(anext(events), 5)
        finally:
            await events.aclose()

    event = asyncio.run(first())
    assert event.payload["status"] == 200 and _auth(server[-1]) == "user:pw-http-1"
