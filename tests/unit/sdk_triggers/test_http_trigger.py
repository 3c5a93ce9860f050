from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from statewright.sdk.triggers import HttpTrigger, TriggerEvent


async def _first_event(trigger, timeout: float = 5.0) -> TriggerEvent:
    events = trigger.run()
    try:
        return await asyncio.wait_for(anext(events), timeout)
    finally:
        await events.aclose()


class _Server:
    """A scripted local HTTP server: each request gets the next (status, body) in the list."""

    def __init__(self, responses: list[tuple[int, bytes]]) -> None:
        self.responses = list(responses)
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        self.lock = threading.Lock()

    def next_response(self) -> tuple[int, bytes]:
        with self.lock:
            return self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]


def _handler(script: _Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            script.requests.append((self.command, self.path, dict(self.headers), body))
            status, payload = script.next_response()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextlib.contextmanager
def serve(responses: list[tuple[int, bytes]]) -> Iterator[tuple[str, _Server]]:
    script = _Server(responses)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}", script
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_polls_until_the_service_is_ready():
    with serve([(503, b"warming up"), (503, b"warming up"), (200, b"ready")]) as (url, script):
        trigger = HttpTrigger(f"{url}/health", poke_interval=0.01)
        event = asyncio.run(_first_event(trigger))
    assert event == TriggerEvent({"status": 200, "body": "ready"})
    assert [request[:2] for request in script.requests] == [("GET", "/health")] * 3


def test_sends_method_headers_and_form_data():
    with serve([(201, b"created")]) as (url, script):
        trigger = HttpTrigger(
            url,
            method="POST",
            headers={"X-Token": "secret"},
            data={"name": "run-1"},
            success_status_codes=[201],
        )
        event = asyncio.run(_first_event(trigger))
    assert event.payload == {"status": 201, "body": "created"}
    method, _, headers, body = script.requests[0]
    assert method == "POST"
    assert headers["X-Token"] == "secret"
    assert body == b"name=run-1"


def test_status_outside_success_codes_keeps_polling():
    with serve([(200, b"not yet"), (202, b"accepted")]) as (url, script):
        trigger = HttpTrigger(url, success_status_codes=[202], poke_interval=0.01)
        event = asyncio.run(_first_event(trigger))
    assert event.payload == {"status": 202, "body": "accepted"}
    assert len(script.requests) == 2


def test_fail_on_status_fires_an_error_event():
    with serve([(503, b""), (404, b"gone")]) as (url, _):
        trigger = HttpTrigger(url, fail_on_status=[404], poke_interval=0.01)
        event = asyncio.run(_first_event(trigger))
    assert event.payload["status"] == "error"
    assert event.payload["http_status"] == 404
    assert "HTTP 404" in event.payload["message"]


def test_long_body_is_truncated_to_64_kib():
    body = ("é" * 40_000).encode()  # 80,000 bytes of two-byte characters
    with serve([(200, body)]) as (url, _):
        event = asyncio.run(_first_event(HttpTrigger(url)))
    text = event.payload["body"]
    assert len(text.encode()) <= 64 * 1024
    assert text == "é" * (64 * 1024 // 2)


class _CountFailures(logging.Handler):
    """Keeps the "failed (attempt n)" messages; sets ``enough`` once ``wanted`` are in."""

    def __init__(self, wanted: int) -> None:
        super().__init__(logging.WARNING)
        self.wanted = wanted
        self.messages: list[str] = []
        self.enough = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "failed (attempt" in record.getMessage():
            self.messages.append(record.getMessage())
            if len(self.messages) >= self.wanted:
                self.enough.set()


def test_connection_errors_are_logged_and_polling_goes_on(caplog):
    trigger = HttpTrigger(f"http://127.0.0.1:{_free_port()}/", poke_interval=0.01)
    failures = _CountFailures(wanted=3)

    async def scenario() -> None:
        # Runs until the third failed attempt is logged, however long each attempt takes.
        polling = asyncio.create_task(_first_event(trigger, timeout=None))
        logged = asyncio.create_task(failures.enough.wait())
        try:
            done, _ = await asyncio.wait({polling, logged}, timeout=120,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            polling.cancel()
            logged.cancel()
        assert polling not in done  # no event: a connection error never ends the polling
        assert logged in done, f"only {len(failures.messages)} failed attempts were logged"

    logger = logging.getLogger("statewright.sdk.triggers.http")
    with caplog.at_level(logging.WARNING, logger=logger.name):
        logger.addHandler(failures)
        try:
            asyncio.run(scenario())
        finally:
            logger.removeHandler(failures)
    for attempt, message in enumerate(failures.messages[:3], start=1):
        assert f"(attempt {attempt})" in message and "polling again" in message


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="http:// or https://"):
        HttpTrigger("ftp://example.com/")
    with pytest.raises(ValueError, match="method"):
        HttpTrigger("http://example.com/", method="BREW")
    with pytest.raises(ValueError, match="poke_interval"):
        HttpTrigger("http://example.com/", poke_interval=-1)
