"""Flows recorded in the test database: the recorder's backend in this process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import Engine, select

from statewright.db.tables import dag_run, state_transition, task_instance
from statewright.flows import use_backend
from statewright.services.flows.recorder import DbBackend

if TYPE_CHECKING:
    from fastapi.testclient import TestClient


@pytest.fixture
def client(engine: Engine, tmp_path: Path,
           auth_headers: Callable[..., dict[str, str]]) -> TestClient:
    """The REST API and the UI on the test's engine, as an admin."""
    from fastapi.testclient import TestClient

    from statewright.api import create_app
    from statewright.config import load_settings

    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home")})
    return TestClient(create_app(engine=engine, settings=settings),
                      headers=auth_headers(engine))


@pytest.fixture
def recorded(engine: Engine) -> Iterator[DbBackend]:
    backend = DbBackend(engine)
    use_backend(lambda: backend)
    yield backend
    use_backend(None)


def run_history(engine: Engine, run_pk: int | None = None) -> list[tuple[str, str]]:
    with engine.connect() as conn:
        stmt = select(state_transition.c.to_state, state_transition.c.name).where(
            state_transition.c.entity == "dag_run")
        if run_pk is not None:
            stmt = stmt.where(state_transition.c.entity_id == run_pk)
        return [tuple(r) for r in conn.execute(stmt.order_by(state_transition.c.id)).all()]


def task_history(engine: Engine, task_id: str) -> list[str]:
    with engine.connect() as conn:
        return [r.name for r in conn.execute(
            select(state_transition.c.name).where(
                state_transition.c.entity == "task_instance",
                state_transition.c.task_id == task_id).order_by(state_transition.c.id)).all()]


def task_rows(engine: Engine) -> dict[str, Any]:
    with engine.connect() as conn:
        return {r.task_id: r for r in conn.execute(select(task_instance)).all()}


def runs(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        return list(conn.execute(select(dag_run).order_by(dag_run.c.id)).all())
