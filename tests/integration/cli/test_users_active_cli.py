"""`statewright users deactivate / reactivate`: a deactivated user cannot sign in until it is
reactivated, `users list` says who is active, and the only active admin is kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from sqlalchemy import Engine

from statewright.services.auth.accounts import authenticate

Run = Callable[..., Result]


@pytest.fixture
def env(engine: Engine, tmp_path: Path) -> dict[str, str]:
    return {"STATEWRIGHT_HOME": str(tmp_path / "home"),
            "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False),
            "COLUMNS": "200", "USER": "carol"}


def test_deactivate_and_reactivate(cli_run: Run, env: dict[str, str], engine: Engine) -> None:
    assert cli_run(env, "users", "create", "root", "-r", "admin", "-p", "root-pass1"
                   ).exit_code == 0
    assert cli_run(env, "users", "create", "ann", "-p", "ann-pass-1").exit_code == 0
    done = cli_run(env, "users", "deactivate", "ann")
    assert done.exit_code == 0 and "ann is deactivated" in done.output
    assert authenticate(engine, "ann", "ann-pass-1") is None
    listed = json.loads(cli_run(env, "users", "list", "-o", "json").output)
    assert {u["username"]: u["active"] for u in listed} == {"ann": False, "root": True}
    assert cli_run(env, "users", "reactivate", "ann").exit_code == 0
    assert authenticate(engine, "ann", "ann-pass-1") is not None
    only = cli_run(env, "users", "deactivate", "root")
    assert only.exit_code != 0 and "only active admin" in only.output
    missing = cli_run(env, "users", "deactivate", "nobody")
    assert missing.exit_code != 0 and "No user 'nobody'" in missing.output
