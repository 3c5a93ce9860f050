"""Durable flow runs: killed midway (kill -9), resumed, and no completed call is made twice.

A durable flow makes 100 task calls, each appending its number to a file (its side effect).
Its process is killed while it runs; the run ends Crashed. ``statewright flows resume`` runs
it again on the same run: each call that had completed returns its recorded result instead of
running, so its number is in the file once; the run ends Completed. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from sqlalchemy import Engine, select

from statewright.db.tables import dag_run, state_transition, task_instance

STATEWRIGHT = str(Path(sys.executable).with_name("statewright"))

FLOW = """\
import os, time
from statewright.flows import flow, task

@task
def step(n: int, offset: int) -> int:
    with open(os.environ["EFFECTS"], "a") as out:
        out.write(f"{{n}}\\n")
    if n == int(os.environ.get("HOLD", "-1")):
        time.sleep(600)  # the call the process is killed in
    time.sleep({pause})
    return n + offset

@flow(durable=True{retries})
def hundred(count: int = 100) -> int:
    offset = int(os.environ.get("OFFSET", "0"))
    total = 0
    for n in range(count):
        total += step(n, offset)
    return total

if __name__ == "__main__":
    print("total", hundred())
"""


def _env(engine: Engine, tmp_path: Path, **extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STATEWRIGHT_")}
    return {**clean, "STATEWRIGHT_HOME": str(tmp_path / "home"),
            "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False),
            "STATEWRIGHT_FLOWS_BACKEND": "recorder", "EFFECTS": str(tmp_path / "effects.txt"),
            "PREFECT_LOGGING_LEVEL": "WARNING", **extra}


def _wait(condition: object, what: str, timeout: float = 60.0) -> None:
    assert callable(condition)
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _effects(tmp_path: Path) -> list[int]:
    path = tmp_path / "effects.txt"
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def _run_row(engine: Engine) -> object:
    with engine.connect() as conn:
        return conn.execute(select(dag_run).where(dag_run.c.dag_id == "hundred")
                            .order_by(dag_run.c.id.desc())).first()


def _tis(engine: Engine, run_pk: int) -> dict[str, tuple[str, str, int]]:
    with engine.connect() as conn:
        return {r.task_id: (r.state, r.state_name, r.try_number) for r in conn.execute(
            select(task_instance).where(task_instance.c.dag_run_id == run_pk))}


def _crash_midway(engine: Engine, tmp_path: Path, *, retries: str = "", after: int = 40,
                  hold: bool = False) -> object:
    """Kills the flow's process once ``after`` calls have begun; with ``hold``, the last of them
    waits to be killed, so the kill lands in a call and not between two."""
    script = tmp_path / "hundred.py"
    script.write_text(FLOW.format(pause="0.02", retries=retries))
    extra = {"HOLD": str(after - 1)} if hold else {}
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path,
                            env=_env(engine, tmp_path, **extra), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        _wait(lambda: len(_effects(tmp_path)) >= after, f"{after} calls")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    return script


def test_a_killed_durable_run_resumes_and_no_completed_call_runs_twice(
        engine: Engine, tmp_path: Path) -> None:
    _crash_midway(engine, tmp_path, hold=True)
    _wait(lambda: _run_row(engine).state_name == "Crashed", "the run to end Crashed")
    run = _run_row(engine)
    before = _tis(engine, run.id)
    done_before = {t for t, (state, _, _) in before.items() if state == "success"}
    crashed = {t for t, (_, name, _) in before.items() if name == "Crashed"}
    assert done_before == {f"step-{n}" for n in range(39)}, before
    assert crashed == {"step-39"}, before

    resumed = subprocess.run([STATEWRIGHT, "flows", "resume", run.run_id], cwd=tmp_path,
                             env=_env(engine, tmp_path), capture_output=True, text=True,
                             timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    run = _run_row(engine)
    assert (run.state, run.state_name) == ("success", "Completed")
    counts = Counter(_effects(tmp_path))
    assert sorted(counts) == list(range(100))
    (again,) = crashed
    for n in range(100):
        if f"step-{n}" != again:
            assert counts[n] == 1, (n, counts[n])  # made once: before the crash or after it
    after = _tis(engine, run.id)
    assert all(state == "success" for state, _, _ in after.values())
    assert after[again][2] == before[again][2] + 1  # the crashed call: a new try
    for task_id in done_before:
        assert after[task_id] == before[task_id]  # untouched: its result was returned
    with engine.connect() as conn:
        edges = [(r.from_state, r.to_state, r.name, r.actor) for r in conn.execute(
            select(state_transition).where(state_transition.c.entity == "dag_run",
                                           state_transition.c.entity_id == run.id)
            .order_by(state_transition.c.id))]
    assert ("failed", "queued", "Resuming") in [e[:3] for e in edges]
    assert [e[:2] for e in edges][-3:] == [("failed", "queued"), ("queued", "running"),
                                          ("running", "success")]


def test_a_resume_whose_calls_have_other_arguments_fails_naming_the_call(
        engine: Engine, tmp_path: Path) -> None:
    _crash_midway(engine, tmp_path, after=5)
    _wait(lambda: _run_row(engine).state_name == "Crashed", "the run to end Crashed")
    run = _run_row(engine)
    resumed = subprocess.run([STATEWRIGHT, "flows", "resume", run.run_id], cwd=tmp_path,
                             env=_env(engine, tmp_path, OFFSET="1"), capture_output=True,
                             text=True, timeout=180)
    assert resumed.returncode != 0
    run = _run_row(engine)
    assert run.state == "failed"
    assert "task call 'step-0'" in (run.state_message or "")
    assert "other arguments" in run.state_message


def test_refused_resumes_change_nothing(engine: Engine, tmp_path: Path) -> None:
    script = tmp_path / "hundred.py"
    script.write_text(FLOW.format(pause="0", retries=""))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path,
                          env={**_env(engine, tmp_path)}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    run = _run_row(engine)
    assert run.state_name == "Completed"
    refused = subprocess.run([STATEWRIGHT, "flows", "resume", run.run_id], cwd=tmp_path,
                             env=_env(engine, tmp_path), capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode == 1
    assert "not Crashed: only a crashed run is resumed" in refused.stderr + refused.stdout
    assert _run_row(engine).state_name == "Completed"
    unknown = subprocess.run([STATEWRIGHT, "flows", "resume", "no-such-run"], cwd=tmp_path,
                             env=_env(engine, tmp_path), capture_output=True, text=True,
                             timeout=60)
    assert unknown.returncode == 1 and "There is no run 'no-such-run'" in (
        unknown.stderr + unknown.stdout)


def test_a_killed_durable_run_with_retries_resumes_by_itself(
        engine: Engine, tmp_path: Path) -> None:
    _crash_midway(engine, tmp_path, retries=", retries=1", after=20)
    _wait(lambda: _run_row(engine).state_name == "Completed", "the run to resume and complete",
          timeout=120)
    run = _run_row(engine)
    counts = Counter(_effects(tmp_path))
    assert sorted(counts) == list(range(100))
    assert sum(1 for c in counts.values() if c > 1) <= 1  # only the call killed midway
    with engine.connect() as conn:
        resumes = [(r.actor, r.name) for r in conn.execute(
            select(state_transition).where(state_transition.c.entity == "dag_run",
                                           state_transition.c.entity_id == run.id,
                                           state_transition.c.to_state == "queued"))]
    assert resumes[-1] == ("worker", "Resuming")  # by itself, once
    assert len(resumes) == 2  # created queued, then the one resume


def test_a_crashed_run_of_a_flow_that_is_not_durable_is_not_resumed(
        engine: Engine, tmp_path: Path) -> None:
    script = tmp_path / "hundred.py"
    script.write_text(FLOW.format(pause="0.02", retries="").replace(
        "durable=True", "name='plain'"))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path,
                            env=_env(engine, tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        _wait(lambda: len(_effects(tmp_path)) >= 5, "5 calls")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)

    def crashed() -> object:
        with engine.connect() as conn:
            return conn.execute(select(dag_run).where(dag_run.c.dag_id == "plain")
                                .order_by(dag_run.c.id.desc())).first()

    _wait(lambda: crashed().state_name == "Crashed", "the run to end Crashed")
    refused = subprocess.run([STATEWRIGHT, "flows", "resume", crashed().run_id], cwd=tmp_path,
                             env=_env(engine, tmp_path), capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode == 1
    assert "is not durable" in refused.stderr + refused.stdout
    assert crashed().state_name == "Crashed"
