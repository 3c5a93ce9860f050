"""A service that starts while its database restarts waits for it, with backoff (found by the
chaos suite: a scheduler restarted during a PostgreSQL restart exited at once)."""

from __future__ import annotations

import socket

import pytest
from sqlalchemy import create_engine

from statewright.core.errors import ConfigurationError
from statewright.db.engine import check_connection, make_engine


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres?connect_timeout=1"


def test_a_one_off_command_fails_at_once() -> None:
    engine = create_engine(_closed_port_url())
    slept: list[float] = []
    try:
        with pytest.raises(ConfigurationError, match="Cannot connect to the database"):
            check_connection(engine, sleep=slept.append)
    finally:
        engine.dispose()
    assert slept == []


def test_a_service_backs_off_then_gives_up_after_its_wait() -> None:
    engine = create_engine(_closed_port_url())
    slept: list[float] = []
    try:
        with pytest.raises(ConfigurationError):
            check_connection(engine, wait_seconds=20, sleep=slept.append)
    finally:
        engine.dispose()
    assert slept[:5] == [0.2, 0.4, 0.8, 1.6, 3.2]
    assert max(slept) == 5.0 and sum(slept) <= 20


def test_a_service_connects_once_the_database_is_back(postgres_url: str) -> None:
    """The database comes back while the service waits: it connects and goes on."""
    engine = make_engine(postgres_url)
    real_connect = engine.connect
    attempts = []

    def flaky_connect():  # type: ignore[no-untyped-def]
        attempts.append(1)
        if len(attempts) < 3:
            return create_engine(_closed_port_url()).connect()
        return real_connect()

    engine.connect = flaky_connect  # type: ignore[method-assign]
    slept: list[float] = []
    try:
        check_connection(engine, wait_seconds=60, sleep=slept.append)
    finally:
        engine.dispose()
    assert slept == [0.2, 0.4] and len(attempts) == 3
