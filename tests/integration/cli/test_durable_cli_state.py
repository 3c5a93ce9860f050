"""``tasks state`` and ``assets state``, and ``tasks clear --clear-state`` (SQLite and
PostgreSQL)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from statewright.sdk import DAG, NEVER_EXPIRE, Asset, task


def test_state_commands_show_and_clear_state(engine: Engine, tmp_path: Path,
                                             cli_run: Callable[..., Any]) -> None:
    orders = Asset(name="cli_orders", uri="s3://w/cli")
    with DAG("ts_cli", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
        @task
        def each(x: int, task_state_store=None, asset_state_store=None):  # type: ignore[no-untyped-def]
            task_state_store.set("x", x, retention=NEVER_EXPIRE)
            if x == 1:
                asset_state_store[orders].set("seen", [x])
        each.expand(x=[1, 2])
    run_id = dag.test(engine=engine).run_id
    env = {"STATEWRIGHT_HOME": str(tmp_path),
           "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False),
           "COLUMNS": "200"}
    shown = cli_run(env, "tasks", "state", "ts_cli", run_id, "each", "-o", "json")
    assert shown.exit_code == 0, shown.output
    assert [(r["map_index"], r["value"]) for r in json.loads(shown.output)] == [(0, 1), (1, 2)]
    one = cli_run(env, "tasks", "state", "ts_cli", run_id, "each", "--map-index", "1", "-o",
                  "json")
    assert [(r["map_index"], r["retention"]) for r in json.loads(one.output)] == [
        (1, "never_expire")]
    table = cli_run(env, "tasks", "state", "ts_cli", run_id, "each")
    assert "never_expire" in table.output and "key" in table.output
    asset = cli_run(env, "assets", "state", "cli_orders")
    assert "seen" in asset.output and "[1]" in asset.output
    none = cli_run(env, "tasks", "state", "ts_cli", "nope", "each")
    assert none.exit_code == 0 and "no task state" in none.output
    kept = cli_run(env, "tasks", "clear", run_id, "--dag-id", "ts_cli", "-t", "each",
                   "--map-index", "0", "-y", "--clear-state")
    assert kept.exit_code == 0, kept.output
    left = json.loads(cli_run(env, "tasks", "state", "ts_cli", run_id, "each",
                              "-o", "json").output)
    assert [r["map_index"] for r in left] == [1]
