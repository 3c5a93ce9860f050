"""A flow run says what it does, as Prefect 3 does: on the console and in its run's log files.

Each script runs in its own process on a new home (as a user runs it); the console lines are
compared one by one, without their time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

STATEWRIGHT = str(Path(sys.executable).with_name("statewright"))

SCRIPT = """\
import os
from statewright.flows import flow, task
from statewright.sdk.masking import mask_secret

@task(retries={retries}, retry_delay_seconds=0)
def fetch(n: int) -> int:
    if n == 2:
        raise ValueError("boom with " + os.environ["SECRET"])
    return n * 10

@flow(log_prints=True)
def totals(count: int = 3) -> int:
    mask_secret(os.environ["SECRET"])
    total = 0
    for n in range(count):
        total += fetch(n)
    print(f"total {{total}}")
    return total

if __name__ == "__main__":
    totals({count})
"""
_TIME = re.compile(r"^\d\d:\d\d:\d\d\.\d{3} \| ")


def _run(tmp_path: Path, *, count: int, retries: int, **env: str
         ) -> tuple[subprocess.CompletedProcess[str], Path]:
    script = tmp_path / "totals.py"
    script.write_text(SCRIPT.format(count=count, retries=retries))
    home = tmp_path / "home"
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("STATEWRIGHT_", "PREFECT_"))}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120,
                          env={**clean, "STATEWRIGHT_HOME": str(home), "SECRET": "hunter2-pw",
                               # no server answers here: no "View at" line
                               "STATEWRIGHT_API_PORT": "9", **env})
    return done, home


def _lines(stderr: str) -> list[str]:
    """Each record's first line without its time; traceback lines are left out."""
    out = []
    for line in stderr.splitlines():
        if _TIME.match(line):
            out.append(_TIME.sub("", line))
    return out


def _run_id(lines: list[str]) -> str:
    (name,) = re.findall(r"Beginning flow run '([^']+)'", lines[0])
    return name


def test_a_successful_flow_run_prints_its_start_task_runs_prints_and_final_state(
        tmp_path: Path) -> None:
    done, home = _run(tmp_path, count=2, retries=0)
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stderr)
    run = f"Flow run '{_run_id(lines)}'"
    assert lines == [
        f"INFO    | {run} - Beginning flow run '{_run_id(lines)}' for flow 'totals'",
        "INFO    | Task run 'fetch-0' - Created task run 'fetch-0' for task 'fetch'",
        "INFO    | Task run 'fetch-0' - Finished in state Completed()",
        "INFO    | Task run 'fetch-1' - Created task run 'fetch-1' for task 'fetch'",
        "INFO    | Task run 'fetch-1' - Finished in state Completed()",
        f"INFO    | {run} - total 10",
        f"INFO    | {run} - Finished in state Completed()",
    ]
    assert "total 10" not in done.stdout  # log_prints: the print became a log line
    logs = subprocess.run([STATEWRIGHT, "flows", "logs", _run_id(lines)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "STATEWRIGHT_HOME": str(home)})
    assert logs.returncode == 0, logs.stderr
    said = [re.sub(r"\[[^]]+\] ", "", line) for line in logs.stdout.splitlines()]
    assert said[0] == f"INFO - Beginning flow run '{_run_id(lines)}' for flow 'totals'"
    assert "fetch-1 #1 INFO - Finished in state Completed()" in said
    assert said[-2:] == ["INFO - total 10", "INFO - Finished in state Completed()"]


def test_a_retried_then_failed_task_run_prints_each_try_with_its_traceback_masked(
        tmp_path: Path) -> None:
    done, home = _run(tmp_path, count=3, retries=1)
    assert done.returncode == 1
    lines = _lines(done.stderr)
    run = f"Flow run '{_run_id(lines)}'"
    failed = "Task run encountered an exception ValueError: boom with ***"
    assert lines[5:] == [
        "INFO    | Task run 'fetch-2' - Created task run 'fetch-2' for task 'fetch'",
        "ERROR   | Task run 'fetch-2' - Task run failed with exception: "
        "ValueError('boom with ***') - Retry 1/1 will start immediately",
        "ERROR   | Task run 'fetch-2' - Task run failed with exception: "
        "ValueError('boom with ***') - Retries are exhausted",
        f"ERROR   | Task run 'fetch-2' - Finished in state Failed('{failed}')",
        f"ERROR   | {run} - Encountered exception during execution: "
        "ValueError('boom with ***')",
        f"ERROR   | {run} - Finished in state Failed('Flow run encountered an exception. "
        "ValueError: boom with ***')",
    ]
    assert 'raise ValueError("boom with " + os.environ["SECRET"])' in done.stderr  # traceback
    logged = done.stderr.split("Finished in state Failed('Flow run")[0]
    assert "hunter2-pw" not in logged
    tries = sorted(home.glob("logs/dag_id=totals/run_id=*/task_id=fetch-2/attempt=*.log"))
    assert [p.name for p in tries] == ["attempt=1.log", "attempt=2.log"]
    second = tries[1].read_text()
    assert "Retries are exhausted" in second and "Traceback (most recent call last)" in second
    assert "hunter2-pw" not in second


def test_the_level_follows_prefects_setting_and_the_console_can_be_quiet(
        tmp_path: Path) -> None:
    done, _ = _run(tmp_path, count=1, retries=0, PREFECT_LOGGING_LEVEL="WARNING")
    assert done.returncode == 0 and _lines(done.stderr) == []
    (tmp_path / "quiet").mkdir()
    quiet, home = _run(tmp_path / "quiet", count=1, retries=0,
                       PREFECT_LOGGING_TO_CONSOLE="false")
    assert quiet.returncode == 0 and _lines(quiet.stderr) == []
    (flow_log,) = home.glob("logs/dag_id=totals/run_id=*/flow_run.log")
    assert "Finished in state Completed()" in flow_log.read_text()


def test_the_run_log_is_served_by_the_api(tmp_path: Path,
                                          auth_headers: Callable[..., dict[str, str]]) -> None:
    from fastapi.testclient import TestClient

    from statewright.api import create_app
    from statewright.config import load_settings
    from statewright.db.engine import make_engine

    done, home = _run(tmp_path, count=2, retries=0)
    assert done.returncode == 0, done.stderr
    run_id = _run_id(_lines(done.stderr))
    settings = load_settings({"STATEWRIGHT_HOME": str(home)})
    engine = make_engine(settings.database_url)
    try:
        with TestClient(create_app(engine=engine, settings=settings),
                        headers=auth_headers(engine, "vera", "viewer")) as client:
            log = client.get(f"/api/v1/dags/totals/dagRuns/{run_id}/log").json()
            assert log["path"].endswith("flow_run.log") and not log["path"].startswith("/")
            assert "Beginning flow run" in log["content"] and "total 10" in log["content"]
            assert "Created task run" not in log["content"]  # the task runs' lines: their tries'
            unknown = client.get("/api/v1/dags/totals/dagRuns/nope/log")
            assert unknown.status_code == 404
    finally:
        engine.dispose()
