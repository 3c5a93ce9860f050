"""``statewright triggers list`` / ``triggers triggerers`` and ``statewright triggerer``'s
answers to a missing or malformed Fernet key."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from triggerer_helpers import defer, make_run

from statewright.cli.main import cli
from statewright.crypto import generate_key, load_fernet
from statewright.db.engine import make_engine
from statewright.db.migrate import migrate
from statewright.sdk.triggers import TimeDeltaTrigger
from statewright.services.worker import deferral


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"STATEWRIGHT_HOME": str(tmp_path / "home"),
            "STATEWRIGHT_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
            "STATEWRIGHT_FERNET_KEY": generate_key()}


def run(env: dict[str, str], *args: str) -> Any:
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_triggers_list_shows_who_waits_on_what(env: dict[str, str]) -> None:
    engine = make_engine(env["STATEWRIGHT_DATABASE_URL"])
    migrate(engine)
    deferral.install_cipher(load_fernet(env["STATEWRIGHT_FERNET_KEY"]))
    try:
        ids = make_run(engine, 2, dag_id="cli_dag")
        defer(engine, list(ids.values()), lambda: TimeDeltaTrigger(timedelta(hours=1)),
              timeout=timedelta(minutes=30))
    finally:
        deferral.install_cipher(None)
        engine.dispose()
    listed = run(env, "triggers", "list", "-o", "json")
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.output)
    assert {(r["dag_id"], r["task_id"], r["triggerer"]) for r in rows} == {
        ("cli_dag", "t0", "unassigned"), ("cli_dag", "t1", "unassigned")}
    assert all(r["trigger_timeout"] for r in rows)
    table = run(env, "triggers", "list")
    assert table.exit_code == 0 and "cli_dag" in table.output and "unassigned" in table.output
    jobs = run(env, "triggers", "triggerers")
    assert jobs.exit_code == 0 and "2 trigger(s) not claimed" in jobs.output


def test_the_triggerer_refuses_a_malformed_key(env: dict[str, str]) -> None:
    result = run({**env, "STATEWRIGHT_FERNET_KEY": "not-a-key"}, "triggerer")
    assert result.exit_code == 1
    assert "Fernet key 1 of 1 is malformed" in result.output


def test_the_triggerer_needs_a_shared_key_off_sqlite(env: dict[str, str]) -> None:
    result = run({**env, "STATEWRIGHT_FERNET_KEY": "",
                  "STATEWRIGHT_DATABASE_URL": "postgresql://127.0.0.1:1/none"}, "triggerer")
    assert result.exit_code == 1
    assert "STATEWRIGHT_FERNET_KEY is not set" in result.output


def test_the_embedded_default_keeps_its_key_in_the_home_folder(env: dict[str, str]) -> None:
    from statewright.config import load_settings

    settings = load_settings({**env, "STATEWRIGHT_FERNET_KEY": ""})
    first = deferral.load_cipher(settings)
    assert (Path(env["STATEWRIGHT_HOME"]) / "fernet.key").exists()
    token = first.encrypt(b"x")
    assert deferral.load_cipher(settings).decrypt(token) == b"x"
