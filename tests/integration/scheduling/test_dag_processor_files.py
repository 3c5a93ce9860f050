"""The DAG processor on real files: one process per file, timeouts, import errors, changes."""

from __future__ import annotations

import os
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.core.clock import ManualClock
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import import_errors
from statewright.services.dag_processor import DagProcessor

NOW = datetime(2026, 1, 10, 12, tzinfo=UTC)


def dag_file(dag_id: str, *, schedule: str = "None", extra: str = "", tasks: tuple[str, ...] =
             ("a",), start: str = "datetime(2026, 1, 1, tzinfo=UTC)") -> str:
    body = "\n".join(f"    EmptyOperator(task_id={t!r})" for t in tasks)
    return textwrap.dedent(f'''
        from datetime import UTC, datetime
        from statewright.sdk import DAG, EmptyOperator
        with DAG({dag_id!r}, schedule={schedule}, start_date={start}{extra}):
        ''') + body + "\n"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    st = path.stat()  # a new mtime even within the same clock tick
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "dags").mkdir()
    return tmp_path / "dags"


def processor(engine: Engine, folder: Path, **kw: Any) -> DagProcessor:
    kw.setdefault("timeout", 10.0)
    return DagProcessor(engine, folder, clock=ManualClock(NOW), **kw)


def dags(engine: Engine) -> dict[str, Any]:
    with engine.connect() as conn:
        return {d.dag_id: d for d in dag_repo.list_dags(conn, only_active=False)}


def errors(engine: Engine) -> dict[str, str]:
    with engine.connect() as conn:
        return {Path(e.filename).name: e.stacktrace for e in import_errors.list_all(conn)}


def test_a_hanging_file_is_killed_and_reported_while_the_others_load(engine: Engine,
                                                                    folder: Path) -> None:
    write(folder, "hang.py", "import time\nwhile True:\n    time.sleep(0.1)\n")
    for i in range(4):
        write(folder, f"ok_{i}.py", dag_file(f"ok_{i}"))
    stats = processor(engine, folder, timeout=2.0, parallelism=2).run_once()
    assert set(dags(engine)) == {f"ok_{i}" for i in range(4)}
    assert list(errors(engine)) == ["hang.py"]
    assert "took longer than 2 seconds" in errors(engine)["hang.py"]
    assert str(folder / "hang.py") in errors(engine)["hang.py"]
    # It returned at all: the file that never ends did not hold the pass.
    assert stats.parsed == 5


@pytest.mark.parametrize("code, expected", [
    ("import os\nos._exit(3)\n", "exited with code 3"),
    ("import ctypes\nctypes.string_at(0)\n", "killed by signal SIGSEGV"),
    ("import sys\nsys.exit(4)\n", "SystemExit: 4"),
    ("raise RuntimeError('boom at import')\n", "RuntimeError: boom at import"),
])
def test_a_file_that_exits_crashes_or_raises_affects_only_itself(
        engine: Engine, folder: Path, code: str, expected: str) -> None:
    write(folder, "bad.py", code)
    write(folder, "good.py", dag_file("good"))
    processor(engine, folder).run_once()
    assert set(dags(engine)) == {"good"}
    assert expected in errors(engine)["bad.py"]


@pytest.mark.parametrize("dag_args, needle", [
    ({"schedule": "'not a cron'"}, "'not a cron'"),
    ({"schedule": "'@daily'", "extra": ", timezone='Mars/Olympus_Mons'"}, "'Mars/Olympus_Mons'"),
    ({"schedule": "'@daily'", "extra": ", end_date=datetime(2025, 1, 1, tzinfo=UTC)"},
     "end_date"),
    ({"schedule": "'@daily'", "start": "None"}, "needs a start_date for schedule '@daily'"),
    ({"schedule": "'@continuous'"}, "'@continuous'"),
])
def test_bad_schedules_are_import_errors_naming_file_dag_and_value(
        engine: Engine, folder: Path, dag_args: dict[str, str], needle: str) -> None:
    write(folder, "broken.py", dag_file("broken_dag", **dag_args))
    write(folder, "fine.py", dag_file("fine", schedule="'@daily'"))
    processor(engine, folder).run_once()
    assert set(dags(engine)) == {"fine"}
    text = errors(engine)["broken.py"]
    assert needle in text and "broken_dag" in text and "broken.py" in text
    assert dags(engine)["fine"].next_dagrun is not None


def test_one_bad_dag_does_not_keep_the_others_of_its_file(engine: Engine, folder: Path) -> None:
    write(folder, "two.py", dag_file("ok_one") + dag_file("no_start", schedule="'@hourly'",
                                                          start="None"))
    processor(engine, folder).run_once()
    assert set(dags(engine)) == {"ok_one"}
    assert "DAG 'no_start' in " in errors(engine)["two.py"]


def test_a_dag_id_in_two_files_is_an_error_on_the_second(engine: Engine, folder: Path) -> None:
    write(folder, "a_first.py", dag_file("shared", tasks=("from_first",)))
    write(folder, "b_second.py", dag_file("shared", tasks=("from_second",)) + dag_file("other"))
    proc = processor(engine, folder)
    proc.run_once()
    text = errors(engine)["b_second.py"]
    assert "'shared'" in text and "a_first.py" in text and "b_second.py" in text
    assert "a_first.py" not in errors(engine)
    assert dags(engine)["shared"].fileloc.endswith("a_first.py")
    assert [t["task_id"] for t in dags(engine)["shared"].serialized["tasks"]] == ["from_first"]
    assert dags(engine)["other"].is_active
    # The first file drops it: the second one gets it and its error goes.
    write(folder, "a_first.py", dag_file("renamed"))
    proc.run_once()
    assert dags(engine)["shared"].fileloc.endswith("b_second.py")
    assert errors(engine) == {}


def test_import_errors_clear_when_the_file_is_fixed(engine: Engine, folder: Path) -> None:
    proc = processor(engine, folder)
    write(folder, "flaky.py", dag_file("flaky"))
    proc.run_once()
    write(folder, "flaky.py", "def broken(:\n")
    proc.run_once()
    assert "SyntaxError" in errors(engine)["flaky.py"]
    assert dags(engine)["flaky"].is_active  # a file that fails keeps its DAGs as they were
    write(folder, "flaky.py", dag_file("flaky", tasks=("a", "b")))
    proc.run_once()
    assert errors(engine) == {}
    assert [t["task_id"] for t in dags(engine)["flaky"].serialized["tasks"]] == ["a", "b"]


def test_only_changed_files_are_imported_again(engine: Engine, folder: Path) -> None:
    proc = processor(engine, folder)
    for i in range(3):
        write(folder, f"f{i}.py", dag_file(f"d{i}"))
    assert proc.run_once().parsed == 3
    assert proc.run_once().parsed == 0
    path = folder / "f1.py"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # touched, same content
    assert proc.run_once().parsed == 0
    write(folder, "f1.py", dag_file("d1", tasks=("a", "new")))
    assert proc.run_once().parsed == 1
    # A new processor (a restart) remembers the files in the database.
    assert processor(engine, folder).run_once().parsed == 0


def test_removed_files_and_dags_become_inactive(engine: Engine, folder: Path) -> None:
    proc = processor(engine, folder)
    write(folder, "keep.py", dag_file("keep"))
    write(folder, "gone.py", dag_file("gone"))
    write(folder, "two.py", dag_file("stays") + dag_file("dropped"))
    write(folder, "err.py", "raise ValueError('x')\n")
    proc.run_once()
    assert "err.py" in errors(engine)
    (folder / "gone.py").unlink()
    (folder / "err.py").unlink()
    write(folder, "two.py", dag_file("stays"))
    stats = proc.run_once()
    active = {k for k, v in dags(engine).items() if v.is_active}
    assert active == {"keep", "stays"}
    assert sorted(stats.deactivated) == ["dropped", "gone"]
    assert errors(engine) == {}
    write(folder, "gone.py", dag_file("gone"))  # back again
    proc.run_once()
    assert dags(engine)["gone"].is_active


def test_new_dags_start_paused_per_setting_and_dag(engine: Engine, folder: Path) -> None:
    write(folder, "p.py", dag_file("default_dag") + dag_file(
        "never_paused", extra=", is_paused_upon_creation=False"))
    processor(engine, folder, paused_at_creation=True).run_once()
    assert dags(engine)["default_dag"].is_paused
    assert not dags(engine)["never_paused"].is_paused


def test_schedule_fields_are_stored(engine: Engine, folder: Path) -> None:
    write(folder, "s.py", dag_file("sched", schedule="'0 6 * * *'",
                                   extra=", timezone='Europe/Berlin', catchup=True"))
    processor(engine, folder).run_once()
    row = dags(engine)["sched"]
    assert row.schedule_summary == "0 6 * * *"
    assert row.timetable == {"type": "cron_trigger", "expression": "0 6 * * *",
                             "timezone": "Europe/Berlin"}
    first = datetime(2026, 1, 1, 5, tzinfo=UTC)  # 06:00 in Berlin (winter)
    assert row.next_dagrun == row.next_dagrun_create_after == first
    assert row.next_dagrun_data_interval_start == row.next_dagrun_data_interval_end == first


def test_dags_errors_cli_shows_them(cli_env: dict[str, str]) -> None:
    from click.testing import CliRunner

    from statewright.cli.main import cli

    folder = Path(cli_env["STATEWRIGHT_DAGS_FOLDER"])
    write(folder, "ok.py", dag_file("ok"))
    write(folder, "bad.py", dag_file("bad_cron", schedule="'61 * * * *'"))
    result = CliRunner().invoke(cli, ["dags", "errors"], env=cli_env)
    assert result.exit_code == 1
    assert "bad.py" in result.output and "bad_cron" in result.output
    write(folder, "bad.py", dag_file("bad_cron", schedule="'1 * * * *'"))
    result = CliRunner().invoke(cli, ["dags", "errors"], env=cli_env)
    assert result.exit_code == 0 and "no import errors" in result.output
