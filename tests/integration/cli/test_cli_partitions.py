"""The command line on timetables and partitions: next-execution in words, a triggered run's
partition key, backfill by a range of partition keys, and their answers to bad input."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from statewright.cli.main import cli

DAGS = textwrap.dedent('''
    from datetime import UTC, datetime
    from statewright.sdk import DAG, EmptyOperator, CronPartitionTimetable
    from statewright.sdk.timetables import EventsTimetable

    with DAG("hourly_parts", schedule=CronPartitionTimetable("0 * * * *", timezone="UTC"),
             start_date=datetime(2026, 1, 1, tzinfo=UTC)):
        EmptyOperator(task_id="a")

    with DAG("weekdays", schedule="30 6 * * 1-5", start_date=datetime(2026, 1, 1, tzinfo=UTC)):
        EmptyOperator(task_id="a")

    with DAG("releases", schedule=EventsTimetable(
            [datetime(2030, 1, 1, tzinfo=UTC), datetime(2030, 6, 1, tzinfo=UTC)],
            description="Release days")):
        EmptyOperator(task_id="a")
''')


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "parts.py").write_text(DAGS)
    return {"STATEWRIGHT_HOME": str(tmp_path / "home"), "STATEWRIGHT_DAGS_FOLDER": str(dags),
            "STATEWRIGHT_DATABASE_URL": ""}


def run(env: dict[str, str], *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_next_execution_explains_the_schedule_in_words(env: dict[str, str]) -> None:
    res = run(env, "dags", "next-execution", "weekdays", "-n", "3", "-o", "json")
    assert res.exit_code == 0, res.output
    body = json.loads(res.output)
    assert body["description"] == "At 06:30, on weekdays (Monday to Friday) (UTC)"
    assert len(body["runs"]) == 3
    releases = json.loads(run(env, "dags", "next-execution", "releases", "-n", "5",
                              "-o", "json").output)
    assert releases["description"] == "Release days"
    assert [r["logical_date"][:10] for r in releases["runs"]] == ["2030-01-01", "2030-06-01"]
    parts = run(env, "dags", "next-execution", "hourly_parts")
    assert parts.exit_code == 0 and "Every hour at minute 0" in parts.output
    assert run(env, "dags", "next-execution", "nope").exit_code == 1


def test_trigger_with_a_partition_key_checks_it(env: dict[str, str]) -> None:
    good = run(env, "dags", "trigger", "hourly_parts", "--run-id", "r1",
               "--partition-key", "2026-01-01T05:00:00")
    assert good.exit_code == 0, good.output
    bad = run(env, "dags", "trigger", "hourly_parts", "--run-id", "r2", "--partition-key", "us")
    assert bad.exit_code == 1
    assert "partition key 'us' does not match this DAG's timetable" in bad.output
    assert run(env, "tasks", "states", "r1").exit_code == 0
    assert run(env, "tasks", "states", "r2").exit_code != 0  # nothing was created


def test_backfill_by_partition_range(env: dict[str, str]) -> None:
    res = run(env, "backfill", "hourly_parts", "--partition-from", "2026-01-01T00:00:00",
              "--partition-to", "2026-01-01T03:00:00", "--dry-run")
    assert res.exit_code == 0, res.output
    assert "4 date(s); would run 4" in res.output
    bad = run(env, "backfill", "hourly_parts", "--partition-from", "2026-01-01",
               "--partition-to", "2026-01-01T03:00:00", "--dry-run")
    assert bad.exit_code == 1 and "does not match this DAG's timetable" in bad.output
    both = run(env, "backfill", "hourly_parts", "--from-date", "2026-01-01",
                "--partition-to", "2026-01-01T03:00:00")
    assert both.exit_code == 1 and "either by --from-date" in both.output
    plain = run(env, "backfill", "weekdays", "--partition-from", "x", "--partition-to", "y")
    assert plain.exit_code == 1 and "have no partition keys" in plain.output
