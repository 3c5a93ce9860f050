"""What the browser tests share with their fixtures."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine

from statewright.api.server import make_server
from statewright.core.clock import utcnow
from statewright.sdk import DAG, EmptyOperator, PythonOperator
from statewright.services.auth.accounts import create_token, create_user


@dataclass
class UiServer:
    url: str
    engine: Engine
    failed_run_id: str
    headers: dict[str, str] = field(default_factory=dict)
    """An admin's bearer header, for the tests' own API calls."""
    logs_folder: Path | None = None


def add_user(engine: Engine, username: str, role: str) -> dict[str, str]:
    """A user (password ``password-<username>``) and the bearer header of an API token."""
    create_user(engine, username, f"password-{username}", role, utcnow())
    secret, _ = create_token(engine, username, kind="api", name="tests", now=utcnow(),
                             lifetime=None)
    return {"Authorization": f"Bearer {secret}"}


def sign_in(context: Any, server: UiServer, username: str) -> None:
    """Give a browser context the session cookie of ``username`` (as the login form would)."""
    secret, _ = create_token(server.engine, username, kind="session", name="web UI",
                             now=utcnow(), lifetime=timedelta(hours=1))
    context.add_cookies([{"name": "statewright_session", "value": secret,
                          "url": server.url + "/", "httpOnly": True, "sameSite": "Lax"}])


@contextmanager
def serving(engine: Engine, settings: Any) -> Iterator[str]:
    """The web UI served on a free 127.0.0.1 port until the block ends; yields its URL."""
    server = make_server(engine, settings, host="127.0.0.1", port=0)
    thread = server.start_thread()
    deadline = time.monotonic() + 20
    while True:
        try:
            if httpx.get(server.url + "api/v1/health", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            pytest.fail("the UI server did not start")
        time.sleep(0.1)
    try:
        yield server.url.rstrip("/")
    finally:
        server.stop()
        thread.join(10)


def _check_amount() -> None:
    print("checking the amount column")
    raise ValueError("column 'amount' has 3 null values")


def orders_dag(fail: bool) -> DAG:
    with DAG("orders", tags=["demo"], description="orders pipeline") as dag:
        if fail:
            check = PythonOperator(task_id="check", python_callable=_check_amount, retries=1,
                                   retry_delay=timedelta(seconds=0))
        else:
            check = EmptyOperator(task_id="check")
        check >> EmptyOperator(task_id="publish")
    return dag
