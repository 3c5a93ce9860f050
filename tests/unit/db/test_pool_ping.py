"""Pooled PostgreSQL connections are pinged before use only after sitting idle: a dropped one
is replaced before a transaction starts on it, and a busy loop pays no round trip."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text

from statewright.db import engine as engine_module
from statewright.db.engine import make_engine


@pytest.fixture
def pg(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.setattr(engine_module, "PING_IDLE_SECONDS", 0.3)
    engine = make_engine(postgres_url)
    yield engine
    engine.dispose()


def _backend(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())


def test_a_connection_dropped_while_idle_is_replaced_before_use(
        pg: Engine, postgres_url: str) -> None:
    pid = _backend(pg)
    killer = make_engine(postgres_url)
    try:
        with killer.connect() as conn:
            assert conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar()
    finally:
        killer.dispose()
    time.sleep(0.4)  # idle past the threshold: pinged, found dropped, replaced
    assert _backend(pg) != pid


def test_a_connection_taken_again_at_once_is_not_pinged(pg: Engine) -> None:
    calls: list[int] = []
    real = pg.dialect.do_ping

    def counting(dbapi_conn):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(dbapi_conn)

    pg.dialect.do_ping = counting  # type: ignore[method-assign]
    first = _backend(pg)
    for _ in range(20):
        assert _backend(pg) == first
    assert calls == []
    time.sleep(0.4)
    assert _backend(pg) == first
    assert calls == [1]
