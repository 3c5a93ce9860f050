"""Prefect's tutorial flows: unchanged under STATEWRIGHT_PREFECT_COMPAT, and with only their
imports changed, recorded in the database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from tests.integration.flows.conftest import runs, task_rows

from statewright.compat.prefect import enabled, install, uninstall
from statewright.services.flows.recorder import DbBackend

TUTORIAL = Path(__file__).parent / "tutorial" / "hello.py"


def test_a_file_that_imports_prefect_runs_unchanged_under_the_switch(tmp_path: Path) -> None:
    env = {**os.environ, "STATEWRIGHT_PREFECT_COMPAT": "true",
           "STATEWRIGHT_FLOWS_BACKEND": "memory"}
    out = subprocess.run([sys.executable, "-m", "statewright.compat.prefect", str(TUTORIAL)],
                         env=env, capture_output=True, text=True, timeout=120, check=True)
    assert "RESULT ('Hello from task10', [1, 4, 9])" in out.stdout


def test_the_switch_is_read_from_the_environment() -> None:
    assert enabled({"STATEWRIGHT_PREFECT_COMPAT": "true"})
    assert not enabled({"STATEWRIGHT_PREFECT_COMPAT": "false"})
    assert not enabled({})


def test_the_tutorial_with_only_its_imports_changed_is_recorded(engine: Engine,
                                                                recorded: DbBackend) -> None:
    source = TUTORIAL.read_text().replace("from prefect.futures import", "from statewright."
                                          "flows import").replace("from prefect import",
                                                                  "from statewright.flows import")
    namespace: dict[str, object] = {"__name__": "tutorial"}
    exec(compile(source, str(TUTORIAL), "exec"), namespace)
    assert namespace["hello_world"]() == ("Hello from task10", [1, 4, 9])  # type: ignore[operator]
    assert [(r.dag_id, r.state) for r in runs(engine)] == [
        ("hello-world", "success"), ("something-else", "success")]
    assert sorted(task_rows(engine)) == [
        "create_message-0", "something-else-0", "square-0", "square-1", "square-2"]


def test_the_alias_answers_prefect_imports_in_process() -> None:
    install()
    try:
        import prefect  # type: ignore[import-not-found]

        from statewright import flows

        assert prefect.flow is flows.flow
    finally:
        uninstall()


def test_prefects_quickstart_returns_its_futures_as_states(engine: Engine,
                                                           recorded: DbBackend) -> None:
    """As Prefect 3.9: a flow returning futures returns their states; all completed →
    Completed ("All states completed.")."""
    install()
    try:
        namespace: dict[str, object] = {"__name__": "quickstart"}
        path = TUTORIAL.parent / "quickstart.py"
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        state = namespace["main"](return_state=True)  # type: ignore[operator]
    finally:
        uninstall()
    assert state.is_completed() and state.message == "All states completed."
    results = state.result()
    assert len(results) == 10 and all(s.is_completed() for s in results)
    assert all(str(s.result()).startswith("Processed customer") for s in results)
    (run,) = runs(engine)
    assert (run.dag_id, run.state) == ("main", "success")
    assert len(task_rows(engine)) == 11


def test_a_pth_line_makes_plain_python_honour_the_switch(tmp_path: Path) -> None:
    """`import statewright.compat.prefect.auto` in a .pth file: `python flows.py` runs a
    file that imports prefect when STATEWRIGHT_PREFECT_COMPAT=true, and only then."""
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / "statewright-prefect.pth").write_text("import statewright.compat.prefect.auto\n")
    code = ("import site, runpy, sys; site.addsitedir(sys.argv[1]); "
            "runpy.run_path(sys.argv[2], run_name='__main__')")
    base = {**os.environ, "STATEWRIGHT_FLOWS_BACKEND": "memory"}
    on = subprocess.run([sys.executable, "-c", code, str(site_dir), str(TUTORIAL)],
                        env={**base, "STATEWRIGHT_PREFECT_COMPAT": "true"}, capture_output=True,
                        text=True, timeout=120)
    assert on.returncode == 0, on.stderr
    assert "RESULT ('Hello from task10', [1, 4, 9])" in on.stdout
    off = subprocess.run([sys.executable, "-c", code, str(site_dir), str(TUTORIAL)],
                         env={**base, "STATEWRIGHT_PREFECT_COMPAT": "false"},
                         capture_output=True, text=True, timeout=120)
    assert off.returncode != 0 and "No module named 'prefect'" in off.stderr


def test_prefects_interactive_flows_wait_for_their_input_unchanged(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The flows pause with their input's schema; a resume with the input (checked) lets them
    go on with it, as Prefect's Resume form does."""
    import asyncio
    import threading

    from statewright.core.clock import utcnow
    from statewright.flows import use_backend
    from statewright.services.controls import resume_run

    paused = threading.Event()

    class Signalling(DbBackend):
        def pause(self, pause: Any) -> None:
            super().pause(pause)
            paused.set()  # committed: the run is paused

    monkeypatch.setattr("statewright.flows.pausing.POLL_SECONDS", 0.05)
    use_backend(lambda: Signalling(engine))
    install()
    try:
        namespace: dict[str, Any] = {"__name__": "interactive"}
        path = TUTORIAL.parent / "interactive.py"
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        cases = [(namespace["greet_user"], "Ann", "Ann"),
                 (namespace["greet_user_model"], {"name": "Bo", "age": 7},
                  "Hello, Bo! You are 7."),
                 (lambda: asyncio.run(namespace["inspiring_joke"]()), {"approved": True},
                  "a raft of ducks walk into a bar... it's a wonder none of them ducked!")]
        for call, given, expected in cases:
            paused.clear()
            out: list[Any] = []
            thread = threading.Thread(target=lambda c=call, o=out: o.append(c()))
            thread.start()
            assert paused.wait(60)
            run = runs(engine)[-1]
            assert (run.state, run.state_name) == ("paused", "Paused")
            resume_run(engine, run.run_id, now=utcnow(), run_input={"value": given}
                       if not isinstance(given, dict) else given)
            thread.join(60)
            assert out == [expected]
    finally:
        uninstall()
        use_backend(None)
    assert {(r.dag_id, r.state) for r in runs(engine)} == {
        ("greet-user", "success"), ("greet-user-model", "success"),
        ("inspiring-joke", "success")}
