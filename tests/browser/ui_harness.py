"""What the browser tests share with their fixtures."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine

from statewright.api.server import make_server


@dataclass
class UiServer:
    url: str
    engine: Engine
    failed_run_id: str


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
