"""Fixtures of the REST API tests: a TestClient over the app on the ``engine`` fixture (SQLite and
PostgreSQL), and a failed run with its logs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from api_helpers import counts, failing_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.config import Settings, load_settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home"),
                          "STATEWRIGHT_LOGS_FOLDER": str(tmp_path / "logs")})


@pytest.fixture
def client(engine: Engine, settings: Settings,
           auth_headers: Callable[..., dict[str, str]]) -> Iterator[TestClient]:
    """A client signed in as an admin (a bearer API token)."""
    with TestClient(create_app(engine=engine, settings=settings),
                    headers=auth_headers(engine)) as c:
        yield c


@pytest.fixture
def anonymous(engine: Engine, settings: Settings) -> Iterator[TestClient]:
    """A client without credentials."""
    with TestClient(create_app(engine=engine, settings=settings)) as c:
        yield c


@pytest.fixture
def failed_run(engine: Engine, settings: Settings) -> tuple[str, str]:
    """A finished, failed run of ``etl`` with logs; returns (dag_id, run_id)."""
    result = failing_dag().test(engine=engine, logs_folder=settings.logs_folder)
    assert result.state.value == "failed"
    return "etl", result.run_id


@pytest.fixture
def snapshot(engine: Engine) -> Callable[[], tuple[int, int, int]]:
    """Counts of runs, task instances and history rows: to check that nothing changed."""
    return lambda: counts(engine)
