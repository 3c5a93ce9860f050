"""Fixtures of the SQL and HTTP provider tests: a scratch PostgreSQL database and a scratch
MariaDB database per session (the servers on 127.0.0.1), SQLite files, and a threaded HTTP
server on an ephemeral port. Each ``*_conn`` fixture defines its connection as a user would
(``STATEWRIGHT_CONN_<ID>``). An unreachable server skips, or fails under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pymysql
import pytest
from sqlalchemy import create_engine, text

from statewright.sdk import secrets

PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def _unreachable(what: str, exc: Exception) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is required under CI=true and is unreachable: {exc}")
    pytest.skip(f"{what} unreachable: {exc}")


def define_connection(monkeypatch: pytest.MonkeyPatch, conn_id: str, value: Any) -> str:
    """Define ``conn_id`` in the environment (a URI, or the JSON form for a dict)."""
    monkeypatch.setenv(f"STATEWRIGHT_CONN_{conn_id.upper()}",
                       value if isinstance(value, str) else json.dumps(value))
    secrets.clear_cache()
    return conn_id


@pytest.fixture(scope="session")
def pg_scratch_database() -> Iterator[str]:
    name = f"sw_providers_{uuid.uuid4().hex[:8]}"
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:
        admin.dispose()
        _unreachable("PostgreSQL", exc)
    yield name
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def maria_scratch_database() -> Iterator[str]:
    name = f"sw_providers_{uuid.uuid4().hex[:8]}"
    try:
        admin = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="",
                                autocommit=True)
    except Exception as exc:
        _unreachable("MariaDB", exc)
    with admin.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE `{name}`")
    yield name
    with admin.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
    admin.close()


@pytest.fixture
def pg_conn(pg_scratch_database: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The connection ``pg_provider``: the scratch PostgreSQL database, Airflow's URI form."""
    return define_connection(
        monkeypatch, "pg_provider",
        f"postgres://postgres@127.0.0.1:5432/{pg_scratch_database}"
        "?application_name=statewright-provider-test")


@pytest.fixture
def maria_conn(maria_scratch_database: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The connection ``maria_provider``: the scratch MariaDB database, the JSON form."""
    return define_connection(monkeypatch, "maria_provider", {
        "conn_type": "mysql", "host": "127.0.0.1", "port": 3306, "login": "root",
        "schema": maria_scratch_database, "extra": {"charset": "utf8mb4", "cursor": "sscursor",
                                                    "client": "mysqlclient"}})


@pytest.fixture
def sqlite_conn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The connection ``lite_provider``: a SQLite file, Airflow's URI form."""
    return define_connection(monkeypatch, "lite_provider", f"sqlite:///{tmp_path / 'lite.db'}")


@dataclass
class HttpServer:
    port: int
    seen: list[dict[str, Any]] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _handler(server: HttpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode() if length else ""
            seen = {"method": self.command, "path": parts.path, "query": query, "body": body,
                    "headers": {k.lower(): v for k, v in self.headers.items()}}
            server.seen.append(seen)
            status, payload = _route(server, parts.path, query, seen)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def _route(server: HttpServer, path: str, query: dict[str, str],
           seen: dict[str, Any]) -> tuple[int, Any]:
    """``/echo`` answers what it got; ``/status/<n>`` answers n; ``/pages`` three pages;
    ``/after/<key>/<n>`` 404 for the first n requests of key, then 200."""
    if path.startswith("/status/"):
        return int(path.rsplit("/", 1)[1]), {"status": path}
    if path == "/pages":
        page = int(query.get("page", "1"))
        return 200, {"page": page, "items": [page * 10], "next": page + 1 if page < 3 else None}
    if path.startswith("/after/"):
        _, _, key, count = path.split("/")
        server.counters[key] = server.counters.get(key, 0) + 1
        ready = server.counters[key] > int(count)
        return (200 if ready else 404), {"ready": ready, "calls": server.counters[key]}
    return 200, seen


@pytest.fixture(scope="session")
def http_server() -> Iterator[HttpServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    server = HttpServer(port=httpd.server_address[1])
    httpd.RequestHandlerClass = _handler(server)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield server
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def web_conn(http_server: HttpServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """The connection ``web_provider``: the local server with basic auth, a header and a
    session setting in its extra."""
    http_server.seen.clear()
    http_server.counters.clear()
    return define_connection(monkeypatch, "web_provider", {
        "conn_type": "http", "host": "127.0.0.1", "port": http_server.port, "login": "ada",
        "password": "pw-web-provider", "extra": {"X-Team": "data", "timeout": 5}})
