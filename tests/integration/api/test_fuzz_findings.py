"""What the fuzz suites found, each kept fixed: a deep body under a content type other than
JSON reached a parser past the limits; an offset past the database's integers and a NUL
character in a name answered 500.
On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

from api_helpers import chain_dag, store_dag
from fastapi.testclient import TestClient
from fuzz_helpers import nested
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.config import Settings

JSON = {"content-type": "application/json"}


def test_a_deep_body_under_another_content_type_is_refused_before_a_route_parses_it(
        engine: Engine, settings: Settings) -> None:
    """Airflow's token route parses any body that is not a form as JSON, so 50,000 brackets
    sent as text/plain passed the limits (then checked for JSON bodies only) and the parser's
    RecursionError answered 500. Every body but a form is checked now."""
    with TestClient(create_app(engine=engine, settings=settings),
                    raise_server_exceptions=False) as c:
        for content_type in ("text/plain", "application/octet-stream", "x/y"):
            res = c.post("/auth/token", content=nested(50_000).encode(),
                         headers={"content-type": content_type})
            assert res.status_code == 422, (content_type, res.text)
            assert "STATEWRIGHT_MAX_INPUT_DEPTH" in res.json()["detail"]
        # a form is read as a form, brackets and all: a wrong password
        res = c.post("/auth/token", data={"username": "nobody", "password": "[[[["})
        assert res.status_code == 401, res.text


def test_an_offset_past_the_databases_integers_is_422_on_every_paged_list(
        engine: Engine, settings: Settings, auth_headers: Callable[..., dict[str, str]]) -> None:
    """``?offset=9223372036854775808`` overflowed SQLite's integers (and PostgreSQL's bigint)
    in the query: a 500. Offsets are bounded now, in the API, its v2 and the UI's pages."""
    huge = 2**63
    with TestClient(create_app(engine=engine, settings=settings), headers=auth_headers(engine),
                    raise_server_exceptions=False) as c:
        for url in ("/api/v1/connections", "/api/v1/dags", "/api/v1/hitlDetails",
                    "/api/v1/eventLogs", "/api/v2/dags", "/api/v2/pools", "/", "/event-logs"):
            res = c.get(url, params={"offset": huge})
            assert res.status_code == 422, (url, res.status_code, res.text[:300])
            within = c.get(url, params={"offset": 2**31 - 1})
            assert within.status_code == 200, (url, within.text[:300])


def test_a_nul_character_anywhere_in_a_request_is_422_and_stores_nothing(
        engine: Engine, settings: Settings, auth_headers: Callable[..., dict[str, str]]) -> None:
    """PostgreSQL's text holds no NUL: a name with one (a pool's, a variable's key, a DAG id
    in a path, a search pattern) answered 500 there and was stored on SQLite. Refused at the
    edge on both now; an escaped backslash before ``u0000`` is text, not a NUL."""
    with TestClient(create_app(engine=engine, settings=settings), headers=auth_headers(engine),
                    raise_server_exceptions=False) as c:
        for method, url, kwargs in (
                ("GET", "/api/v1/dags/%00", {}),
                ("GET", "/api/v1/dags?dag_id_pattern=a%00", {}),
                ("GET", "/api/v1/variables/a%00b", {}),
                ("POST", "/api/v1/pools", {"json": {"name": "\x00", "slots": 0}}),
                ("POST", "/api/v1/variables", {"json": {"key": "k", "value": "v\x00"}}),
                ("POST", "/api/v1/variables", {"content": b'{"key": "k\\\\\\u0000"}',
                                               "headers": JSON}),
                ("POST", "/auth/token", {"data": {"username": "a\x00", "password": "p"}})):
            res = c.request(method, url, **kwargs)  # type: ignore[arg-type]
            assert res.status_code == 422, (method, url, res.text[:300])
            assert "NUL character" in res.json()["detail"]
        assert c.get("/api/v1/pools").json()["total_entries"] == 1  # default_pool alone
        assert c.get("/api/v1/variables").json()["total_entries"] == 0
        res = c.post("/api/v1/variables", content=b'{"key": "k", "value": "\\\\u0000"}',
                     headers=JSON)
        assert res.status_code == 200 and res.json()["value"] == "\\u0000", res.text


def test_a_lone_surrogate_nan_or_an_infinite_number_in_a_json_value_is_422(
        engine: Engine, settings: Settings, auth_headers: Callable[..., dict[str, str]]) -> None:
    """Python's parser takes ``"\\ud800"``, ``NaN`` and ``1e999``; the first has no UTF-8 (a 500
    on both databases), the others are not JSON (a 500 on PostgreSQL, stored on SQLite). A
    pair of surrogate escapes (an emoji) and the same words inside strings are fine."""
    store_dag(engine, chain_dag("p", 1))
    with TestClient(create_app(engine=engine, settings=settings), headers=auth_headers(engine),
                    raise_server_exceptions=False) as c:
        for body in (b'{"key": "k", "value": "\\udfff"}', b'{"conf": {"a": "x\\ud800"}}',
                     b'{"conf": {"a": NaN}}', b'{"conf": {"a": -Infinity}}',
                     b'{"conf": {"a": [1, 1e999]}}'):
            url = "/api/v1/variables" if b"key" in body else "/api/v1/dags/p/dagRuns"
            res = c.post(url, content=body, headers=JSON)
            assert res.status_code == 422, (body, res.text[:300])
            assert "a stored JSON value cannot hold" in res.json()["detail"]
        assert c.get("/api/v1/dags/p/dagRuns").json()["total_entries"] == 0
        res = c.post("/api/v1/dags/p/dagRuns", headers=JSON,
                     content=b'{"conf": {"e": "\\ud83d\\ude00", "n": "NaN 1e999", "x": 1e300}}')
        assert res.status_code == 200, res.text
        assert res.json()["conf"] == {"e": "\U0001f600", "n": "NaN 1e999", "x": 1e300}
