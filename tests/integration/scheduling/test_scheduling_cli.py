"""The scheduling commands: backfill, pools, dags pause / unpause, and their answers to bad
input (one paragraph, a non-zero exit code, nothing created)."""

from __future__ import annotations

import json
import textwrap
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import Engine, func, select

from statewright.cli.main import cli
from statewright.core.clock import utcnow
from statewright.db.tables import backfill, dag_run
from statewright.services.dag_view import DagViewCache
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig
from statewright.services.scheduler.steps import scheduling_steps

DAILY = textwrap.dedent('''
    from datetime import UTC, datetime
    from statewright.sdk import DAG, EmptyOperator
    with DAG("daily", schedule="@daily", start_date=datetime(2026, 1, 1, tzinfo=UTC),
             catchup=False, is_paused_upon_creation=True):
        EmptyOperator(task_id="a") >> EmptyOperator(task_id="b")
''')


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    (Path(cli_env["STATEWRIGHT_DAGS_FOLDER"]) / "daily.py").write_text(DAILY)
    return cli_env


def run(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


def count(engine: Engine, table: object) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


@pytest.mark.parametrize("args, message", [
    (["unknown_dag", "--from-date", "2026-01-01", "--to-date", "2026-01-05"],
     "No DAG with id 'unknown_dag'"),
    (["daily", "--from-date", "2026-01-05", "--to-date", "2026-01-01"],
     "is before the start date"),
    (["daily", "--from-date", "2026-02-30", "--to-date", "2026-03-01"],
     "--from-date '2026-02-30' is not a date"),
    (["daily", "--from-date", "2026-01-01", "--to-date", "yesterday"],
     "--to-date 'yesterday' is not a date"),
])
def test_backfill_bad_input(env: dict[str, str], engine: Engine, args: list[str],
                            message: str) -> None:
    result = run(env, "backfill", *args)
    assert result.exit_code != 0
    assert message in result.output
    assert result.output.count("error:") == 1 and "Traceback" not in result.output
    assert count(engine, backfill) == 0 and count(engine, dag_run) == 0


def test_backfill_dry_run_then_create_and_wait(env: dict[str, str], engine: Engine) -> None:
    dry = run(env, "backfill", "daily", "--start-date", "2026-01-01", "--end-date",
              "2026-01-06", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "2026-01-06T00:00:00+00:00" in dry.output and "would run 6" in dry.output
    assert count(engine, backfill) == 0
    assert run(env, "dags", "unpause", "daily").exit_code == 0

    from statewright.core.states import TI
    from statewright.core.transitions import Actor
    from statewright.db import transition as door
    from statewright.db.engine import transaction

    class Instant:
        def slots_available(self) -> int:
            return 100

        def queue_workloads(self, ids: list[int]) -> None:
            with transaction(engine) as conn:
                door.set_task_instance_state(conn, ids, frm=TI.QUEUED, to=TI.RUNNING,
                                             actor=Actor.WORKER, now=utcnow(),
                                             increment_try=True)
                door.set_task_instance_state(conn, ids, frm=TI.RUNNING, to=TI.SUCCESS,
                                             actor=Actor.WORKER, now=utcnow())

    scheduler = Scheduler(engine, Instant(), views=DagViewCache(),
                          config=SchedulerConfig(idle_seconds=0.05),
                          extra_steps=scheduling_steps())
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(stop,), daemon=True)
    thread.start()
    try:
        result = run(env, "backfill", "daily", "--start-date", "2026-01-01", "--end-date",
                     "2026-01-06", "--max-active-runs", "2", "--wait")
    finally:
        stop.set()
        thread.join(10)
    assert result.exit_code == 0, result.output
    assert "will run 6" in result.output and "backfill 1" in result.output
    with engine.connect() as conn:
        states = conn.execute(select(dag_run.c.run_id, dag_run.c.state)
                              .where(dag_run.c.run_type == "backfill")).all()
    assert len(states) == 6 and {s for _, s in states} == {"success"}


def test_pools_set_list_delete(env: dict[str, str]) -> None:
    assert run(env, "pools", "set", "etl", "4", "--description", "the ETL box").exit_code == 0
    updated = run(env, "pools", "set", "etl", "6")
    assert updated.exit_code == 0 and "updated" in updated.output
    listed = json.loads(run(env, "pools", "list", "-o", "json").output)
    by_name = {p["pool"]: p for p in listed}
    assert by_name["etl"]["slots"] == 6 and by_name["etl"]["open"] == 6
    assert by_name["etl"]["description"] == "the ETL box"
    assert by_name["default_pool"]["slots"] == 128
    table = run(env, "pools", "list")
    assert "open" in table.output and "etl" in table.output
    assert run(env, "pools", "delete", "etl", "-y").exit_code == 0
    gone = run(env, "pools", "delete", "etl")
    assert gone.exit_code == 1 and "No pool named 'etl'" in gone.output
    default = run(env, "pools", "delete", "default_pool")
    assert default.exit_code == 1 and "cannot be deleted" in default.output
    negative = run(env, "pools", "set", "x", "-1")
    assert negative.exit_code != 0


def test_dags_pause_and_unpause(env: dict[str, str], engine: Engine) -> None:
    from statewright.db.repositories import dags as dag_repo

    assert "daily unpaused" in run(env, "dags", "unpause", "daily").output
    with engine.connect() as conn:
        assert not dag_repo.get_dag(conn, "daily").is_paused
    assert "daily paused" in run(env, "dags", "pause", "daily").output
    with engine.connect() as conn:
        assert dag_repo.get_dag(conn, "daily").is_paused
    missing = run(env, "dags", "pause", "nope")
    assert missing.exit_code == 1 and "No DAG with id 'nope'" in missing.output
    # Each change has its audit row, naming the command line's user; the refused one has none.
    from statewright.cli.identity import cli_actor
    from statewright.db.repositories import audit

    with engine.connect() as conn:
        rows, _ = audit.page(conn, limit=10, offset=0, dag_id="daily")
        assert [(r.action, r.username) for r in reversed(rows)] == [
            ("paused_at_creation", "dag_processor"),  # new DAGs start paused
            ("unpause", cli_actor().value), ("pause", cli_actor().value)]
        assert audit.page(conn, limit=10, offset=0, dag_id="nope")[1] == 0
    assert "cli:" in run(env, "dags", "events", "daily").output
