"""Helpers of the fuzz suites: an app over a seeded database (a DAG with a failed run, a pool, a
variable, a connection, users of every role), the OpenAPI document's operations with the
permission each needs, and a fingerprint of every stored row to show that nothing was written."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from api_helpers import failing_dag, store_dag
from fastapi import FastAPI
from sqlalchemy import Engine, select

from statewright.api import create_app
from statewright.config import Settings
from statewright.core.auth import Permission, Role, allows
from statewright.db.tables import metadata

ROLES: tuple[str | None, ...] = ("admin", "operator", "viewer", None)
"""Every role, and None: no credentials at all."""

WRITE_METHODS = ("post", "put", "patch", "delete")

# Rows that change by being asked at all: the audit log records every request (rejected ones
# too), tokens record their last use, logins are counted, and services write heartbeats.
_CHANGED_BY_ASKING = {"audit_log", "auth_token", "login_throttle", "job"}


@dataclass(frozen=True)
class Seeded:
    """What ``seed`` stored: real names to put into paths, so a request reaches its route."""

    dag_id: str
    run_id: str
    task_id: str = "extract"
    pool: str = "fuzz_pool"
    variable: str = "fuzz_variable"
    connection: str = "fuzz_connection"
    username: str = "operator"

    def path_values(self) -> dict[str, str]:
        return {"dag_id": self.dag_id, "run_id": self.run_id, "dag_run_id": self.run_id,
                "task_id": self.task_id, "map_index": "0", "pool_name": self.pool,
                "variable_key": self.variable, "connection_id": self.connection,
                "username": self.username, "backfill_id": "1", "token_id": "1",
                "asset_id": "1", "event_log_id": "1", "version_number": "1",
                "xcom_key": "return_value", "key": "fuzz_key"}


def seed(engine: Engine, settings: Settings,
         auth_headers: Callable[..., dict[str, str]]) -> Seeded:
    """A failed run of ``etl`` with logs, a pool, a variable, a connection, and a user of each
    role; returns the names."""
    store_dag(engine, failing_dag("etl"))
    result = failing_dag("etl").test(engine=engine, logs_folder=settings.logs_folder)
    seeded = Seeded(dag_id="etl", run_id=result.run_id)
    admin = auth_headers(engine)
    for role in ("operator", "viewer"):
        auth_headers(engine, role, role)
    app = create_app(engine=engine, settings=settings)
    from fastapi.testclient import TestClient

    with TestClient(app, headers=admin) as c:
        for url, body in (
                ("/api/v1/pools", {"name": seeded.pool, "slots": 3}),
                ("/api/v1/variables", {"key": seeded.variable, "value": "v"}),
                ("/api/v1/connections", {"connection_id": seeded.connection,
                                         "conn_type": "http", "host": "example.invalid",
                                         "password": "fuzz-secret"})):
            res = c.post(url, json=body)
            assert res.status_code in (200, 201), (url, res.text)
    return seeded


def headers_of(engine: Engine, auth_headers: Callable[..., dict[str, str]],
               role: str | None) -> dict[str, str]:
    """A fresh token of the user named after ``role`` (none for None)."""
    return {} if role is None else auth_headers(engine, role, role)


def allowed(role: str | None, permission: str) -> bool:
    perm = Permission(permission)
    if role is None:
        return perm is Permission.PUBLIC
    return allows(Role(role), perm)


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    permission: str
    spec: dict[str, Any]

    @property
    def json_body(self) -> bool:
        content = (self.spec.get("requestBody") or {}).get("content", {})
        return "application/json" in content

    @property
    def body_may_be_absent(self) -> bool:
        """A body the route may go without (null or none at all), as a materialize's."""
        content = (self.spec.get("requestBody") or {}).get("content", {})
        schema = content.get("application/json", {}).get("schema", {})
        return {"type": "null"} in schema.get("anyOf", [])

    def url(self, seeded: Seeded) -> str:
        values = seeded.path_values()
        url = self.path
        for name, value in values.items():
            url = url.replace("{" + name + "}", value)
        assert "{" not in url, f"no seeded value for a parameter of {self.path}"
        return url


def operations(app: FastAPI, methods: tuple[str, ...] = WRITE_METHODS) -> list[Operation]:
    """The document's operations with one of ``methods`` (lower case)."""
    found = []
    for path, item in app.openapi()["paths"].items():
        for method, spec in item.items():
            if method in methods:
                found.append(Operation(method.upper(), path, spec["x-permission"], spec))
    return found


def fingerprint(engine: Engine) -> dict[str, str]:
    """A digest of every row of every table (but those asking alone changes), per table."""
    digests = {}
    with engine.connect() as conn:
        for table in metadata.sorted_tables:
            if table.name in _CHANGED_BY_ASKING:
                continue
            rows = sorted(repr(tuple(r)) for r in conn.execute(select(table)))
            digests[table.name] = hashlib.sha256("\n".join(rows).encode()).hexdigest()
    return digests


def nested(levels: int) -> str:
    """A JSON text of lists nested ``levels`` deep, inside an object."""
    return '{"a": ' + "[" * levels + "]" * levels + "}"


def many_items(count: int) -> str:
    return '{"a": [' + ",".join(["1"] * count) + "]}"


def bodies_refused_anywhere(limit_bytes: int) -> Iterator[tuple[str, bytes, str]]:
    """(what, body, content type) refused by every write route, one that reads no body too."""
    yield "500-deep nesting", nested(500).encode(), "application/json"
    yield "50,000-deep nesting", nested(50_000).encode(), "application/json"
    yield "20,000 items", many_items(20_000).encode(), "application/json"
    yield "over the byte limit", ('{"a": "' + "x" * (limit_bytes + 10) + '"}').encode(), \
        "application/json"


def bodies_refused_where_json_is_wanted(
        absent_allowed: bool = False) -> Iterator[tuple[str, bytes, str]]:
    """(what, body, content type) refused by a route that wants a JSON object (``absent_allowed``:
    one whose object may be null or missing)."""
    yield "invalid JSON", b'{"a": [1, 2,', "application/json"
    yield "not UTF-8", b'{"a": "\xff\xfe"}', "application/json"
    yield "a wrong content type", b'{"a": 1}', "text/plain"
    yield "deep JSON under a wrong content type", nested(50_000).encode(), "text/plain"
    yield "deep JSON as a form", nested(50_000).encode(), "application/x-www-form-urlencoded"
    yield "a list where an object is wanted", b"[1, 2, 3]", "application/json"
    yield "a string where an object is wanted", b'"text"', "application/json"
    if not absent_allowed:
        yield "null where an object is wanted", b"null", "application/json"
        yield "an empty body", b"", "application/json"
