"""Deep, huge and malformed bodies on every write route of the OpenAPI document (every POST,
PUT, PATCH and DELETE), sent by an admin with the path's names pointing at stored things, so
each request reaches its route: 500- and 50,000-deep nesting, 20,000 items, a body over the
byte limit, invalid JSON, bytes that are not UTF-8, a wrong content type (deep JSON under it
too), and a list, a string or null where an object is wanted. Each gets a clear 4xx and leaves
every stored row as it was. On SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient
from fuzz_helpers import (
    bodies_refused_anywhere,
    bodies_refused_where_json_is_wanted,
    fingerprint,
    operations,
    seed,
)
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.config import Settings, load_settings

REFUSED = {400, 413, 415, 422}
# Routes that take a body but no JSON object: Airflow's token route also reads a form.
_READS_ITS_OWN_BODY = {("POST", "/auth/token")}


def test_every_write_route_refuses_bad_bodies_with_a_4xx_and_writes_nothing(
        engine: Engine, settings: Settings, auth_headers: Callable[..., dict[str, str]]) -> None:
    seeded = seed(engine, settings, auth_headers)
    app = create_app(engine=engine, settings=settings)
    writes = operations(app)
    assert len(writes) > 40
    before = fingerprint(engine)
    failures = []
    with TestClient(app, headers=auth_headers(engine), raise_server_exceptions=False) as c:
        for op in writes:
            bodies = list(bodies_refused_anywhere(settings.api_max_body_bytes))
            if op.json_body or (op.method, op.path) in _READS_ITS_OWN_BODY:
                bodies += bodies_refused_where_json_is_wanted(op.body_may_be_absent)
            for what, body, content_type in bodies:
                res = c.request(op.method, op.url(seeded), content=body,
                                headers={"content-type": content_type})
                if res.status_code not in REFUSED or "detail" not in res.json():
                    failures.append(f"{op.method} {op.path} with {what}: {res.status_code} "
                                    f"{res.text[:200]}")
    assert not failures, "\n".join(failures)
    after = fingerprint(engine)
    assert {t for t in before if before[t] != after[t]} == set()


def test_the_limits_are_named_in_each_answer(
        engine: Engine, settings: Settings, auth_headers: Callable[..., dict[str, str]]) -> None:
    """Which 4xx: 422 naming the depth or item limit, 413 naming the byte limit."""
    seeded = seed(engine, settings, auth_headers)
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine)) as c:
        url = f"/api/v1/dags/{seeded.dag_id}/dagRuns"
        for (what, body, _), (status, named) in zip(
                bodies_refused_anywhere(settings.api_max_body_bytes),
                ((422, "STATEWRIGHT_MAX_INPUT_DEPTH"), (422, "STATEWRIGHT_MAX_INPUT_DEPTH"),
                 (422, "STATEWRIGHT_MAX_INPUT_ITEMS"), (413, "STATEWRIGHT_API_MAX_BODY_BYTES")),
                strict=True):
            res = c.post(url, content=body, headers={"content-type": "application/json"})
            assert res.status_code == status and named in res.json()["detail"], (what, res.text)


def test_a_smaller_body_limit_is_kept_by_a_streamed_body_too(
        engine: Engine, settings: Settings, tmp_path: object,
        auth_headers: Callable[..., dict[str, str]]) -> None:
    """A body sent in chunks, with no Content-Length, is cut off at the limit all the same."""
    seeded = seed(engine, settings, auth_headers)
    small = load_settings({"STATEWRIGHT_HOME": str(settings.home),
                           "STATEWRIGHT_API_MAX_BODY_BYTES": "1000"})
    before = fingerprint(engine)

    def chunks() -> object:
        yield b'{"conf": {"a": "'
        for _ in range(20):
            yield b"x" * 100
        yield b'"}}'

    with TestClient(create_app(engine=engine, settings=small),
                    headers=auth_headers(engine)) as c:
        res = c.post(f"/api/v1/dags/{seeded.dag_id}/dagRuns", content=chunks(),  # type: ignore[arg-type]
                     headers={"content-type": "application/json"})
        assert res.status_code == 413, res.text
    assert fingerprint(engine) == before

