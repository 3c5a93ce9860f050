"""``POST /connections/test``: off by default (403, as Airflow's ``[core] test_connection =
Disabled``); when on, a stored password goes only to the stored type, host, port and schema
(a test elsewhere must carry its own: 400, nothing sent; checked with a listener that would
receive it), and a SQLite database is opened read-only and never created. SQLite and
PostgreSQL."""

from __future__ import annotations

import socket
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.config import load_settings
from statewright.crypto import generate_key, load_fernet
from statewright.sdk import masking
from statewright.services.worker.deferral import install_cipher, installed_cipher

PASSWORD = "stored-only-for-db-host-9"


@pytest.fixture(autouse=True)
def _key() -> Iterator[None]:
    before = installed_cipher()
    install_cipher(load_fernet(generate_key()))
    yield
    install_cipher(before)
    masking.reset_masks()


def _client(engine: Engine, tmp_path: Path, auth_headers: Callable[..., dict[str, str]],
            **env: str) -> TestClient:
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home"), **env})
    return TestClient(create_app(engine=engine, settings=settings),
                      headers=auth_headers(engine))


class _Listener:
    """A TCP listener on 127.0.0.1 that records whatever is sent to it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(5)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.settimeout(0.5)
            try:
                self.received += conn.recv(65536)
            except OSError:
                pass
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


def test_the_connection_test_is_off_by_default(
        engine: Engine, tmp_path: Path, auth_headers: Callable[..., dict[str, str]]) -> None:
    target = tmp_path / "absent.db"
    with _client(engine, tmp_path, auth_headers) as client:
        res = client.post("/api/v1/connections/test", json={
            "connection_id": "lite", "conn_type": "sqlite", "host": str(target)})
    assert res.status_code == 403, res.text
    assert "STATEWRIGHT_TEST_CONNECTION" in res.json()["detail"]
    assert not target.exists()
    for value, on in (("Enabled", True), ("true", True), ("Disabled", False),
                      ("Hidden", False), ("", False)):
        settings = load_settings({"STATEWRIGHT_TEST_CONNECTION": value})
        assert settings.test_connection is on, value


def test_a_stored_password_is_sent_only_where_it_is_stored_for(
        engine: Engine, tmp_path: Path, auth_headers: Callable[..., dict[str, str]]) -> None:
    listener = _Listener()
    try:
        with _client(engine, tmp_path, auth_headers,
                     STATEWRIGHT_TEST_CONNECTION="Enabled") as client:
            stored = {"connection_id": "api", "conn_type": "http", "host": "127.0.0.1",
                      "port": 1, "schema": "http", "login": "u", "password": PASSWORD}
            assert client.post("/api/v1/connections", json=stored).status_code == 200
            for moved in ({"port": listener.port}, {"host": "localhost"},
                          {"conn_type": "postgres"}, {"schema": "https"}):
                res = client.post("/api/v1/connections/test",
                                  json={**stored, "password": None, **moved})
                assert res.status_code == 400, (moved, res.text)
                assert "must carry its own password" in res.json()["detail"]
            assert listener.connections == 0
            # Its own password may go anywhere (here to the listener); never the stored one.
            res = client.post("/api/v1/connections/test", json={
                **stored, "port": listener.port, "password": "given-with-the-test"})
            assert res.status_code == 200, res.text
            # The stored target: the stored password is used (the port refuses: status false).
            same = client.post("/api/v1/connections/test", json={**stored, "password": None})
            assert same.status_code == 200 and same.json()["status"] is False
            assert PASSWORD not in same.text
    finally:
        listener.close()
    assert listener.connections >= 1
    assert PASSWORD.encode() not in listener.received


def test_sqlite_is_opened_read_only_and_never_created(
        engine: Engine, tmp_path: Path, auth_headers: Callable[..., dict[str, str]]) -> None:
    existing = tmp_path / "existing.db"
    with sqlite3.connect(existing) as db:
        db.execute("CREATE TABLE t (x)")
    before = existing.stat().st_mtime_ns, existing.read_bytes()
    absent = tmp_path / "sub" / "absent.db"
    not_a_db = tmp_path / "notes.txt"
    not_a_db.write_text("hello")

    def test(path: Path) -> Any:
        res = client.post("/api/v1/connections/test", json={
            "connection_id": "lite", "conn_type": "sqlite", "host": str(path)})
        assert res.status_code == 200, res.text
        return res.json()

    with _client(engine, tmp_path, auth_headers, STATEWRIGHT_TEST_CONNECTION="Enabled") as client:
        assert test(existing) == {"status": True, "message": "Connection successfully tested"}
        gone = test(absent)
        assert gone["status"] is False and "never creates one" in gone["message"]
        assert test(not_a_db)["status"] is False
    assert not absent.exists() and not absent.parent.exists()
    assert (existing.stat().st_mtime_ns, existing.read_bytes()) == before
    assert not_a_db.read_text() == "hello"
