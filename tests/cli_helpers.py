"""CLI commands run in the test's process on a fixture's engine."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine


def cli_uses_engine(monkeypatch: pytest.MonkeyPatch, engine: Engine) -> None:
    """Commands run in this process use ``engine`` and leave it open when they end (it is the
    fixture's to close: disposing it under the test's own open connections would orphan them)."""
    from statewright.services import listeners

    def close(app: Any) -> None:
        made = app.__dict__.pop("engine", None)
        if made is not None:
            listeners.forget(made)

    monkeypatch.setattr("statewright.cli.app.make_engine", lambda url, **kw: engine)
    monkeypatch.setattr("statewright.cli.app.App.close", close)
