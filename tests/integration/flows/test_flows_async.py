"""``async def`` flows and tasks run (asyncio), as in Prefect 3: ``await task(...)``,
``task.submit`` from an async flow, async subflows, timeouts; their states are recorded."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from tests.integration.flows.conftest import runs, task_history, task_rows

from statewright.db.tables import state_transition
from statewright.flows import flow, task, wait
from statewright.services.flows.recorder import DbBackend


@task
async def fetch(i: int) -> int:
    await asyncio.sleep(0.2)
    return i * 10


@task
def plain(x: int) -> int:
    return x + 1


@flow
async def gather_flow(n: int) -> list[int]:
    values = await asyncio.gather(*(fetch(i) for i in range(n)))
    return [plain(v) for v in values]


def test_an_async_flow_awaits_async_tasks_together_and_records_them(
        engine: Engine, recorded: DbBackend) -> None:
    assert asyncio.run(gather_flow(4)) == [1, 11, 21, 31]
    # awaited together, not one after another: every fetch started before any of them ended
    with engine.connect() as conn:
        moves = conn.execute(select(state_transition.c.id, state_transition.c.to_state).where(
            state_transition.c.entity == "task_instance",
            state_transition.c.task_id.like("fetch-%"))).all()
    starts = [m.id for m in moves if m.to_state == "running"]  # history rows, in order
    ends = [m.id for m in moves if m.to_state == "success"]
    assert len(starts) == len(ends) == 4 and max(starts) < min(ends)
    (run,) = runs(engine)
    assert (run.dag_id, run.state, run.state_name) == ("gather-flow", "success", "Completed")
    rows = task_rows(engine)
    assert sorted(rows) == [f"fetch-{i}" for i in range(4)] + [f"plain-{i}" for i in range(4)]
    assert {r.state for r in rows.values()} == {"success"}
    assert task_history(engine, "fetch-0") == ["Pending", "Running", "Completed"]


def test_submit_and_map_of_async_tasks_from_an_async_flow(recorded: DbBackend,
                                                          engine: Engine) -> None:
    @flow
    async def fan() -> int:
        futures = fetch.map(range(3))
        one = fetch.submit(5)
        wait([*futures, one])
        return sum(f.result() for f in futures) + one.result()

    assert asyncio.run(fan()) == 80
    assert {r.state for r in task_rows(engine).values()} == {"success"}


def test_an_async_task_that_fails_and_retries_ends_as_a_sync_one(recorded: DbBackend,
                                                                 engine: Engine) -> None:
    tries: list[int] = []

    @task(retries=1, retry_delay_seconds=0)
    async def flaky() -> str:
        tries.append(1)
        if len(tries) == 1:
            raise ValueError("once")
        return "ok"

    @flow
    async def retrying() -> str:
        return await flaky()

    assert asyncio.run(retrying()) == "ok"
    assert task_history(engine, "flaky-0") == ["Pending", "Running", "Retrying", "Completed"]


def test_an_async_task_over_its_timeout_fails_timed_out(recorded: DbBackend,
                                                        engine: Engine) -> None:
    @task(timeout_seconds=0.2)
    async def slow() -> None:
        await asyncio.sleep(600)

    @flow
    async def impatient() -> str:
        state = await slow(return_state=True)
        return str(state.name)

    t0 = time.perf_counter()
    assert asyncio.run(impatient()) == "TimedOut"
    assert time.perf_counter() - t0 < 120  # cut short: the sleep is ten minutes
    assert task_history(engine, "slow-0")[-1] == "TimedOut"


def test_an_async_subflow_and_an_async_task_in_a_sync_flow(recorded: DbBackend,
                                                           engine: Engine) -> None:
    @flow
    async def child(x: int) -> int:
        return await fetch(x)

    @flow
    async def parent() -> int:
        return await child(2) + await child(3)

    @flow
    def sync_parent() -> int:
        fut = fetch.submit(1)  # a sync flow submits an async task: it runs on the runner
        return int(fut.result())

    assert asyncio.run(parent()) == 50
    assert sync_parent() == 10
    states = {(r.dag_id, r.state) for r in runs(engine)}
    assert states == {("parent", "success"), ("child", "success"), ("sync-parent", "success")}


def test_a_raising_async_flow_fails(recorded: DbBackend, engine: Engine) -> None:
    @flow
    async def broken() -> None:
        await asyncio.sleep(0)
        raise RuntimeError("nope")

    with pytest.raises(RuntimeError, match="nope"):
        asyncio.run(broken())
    (run,) = runs(engine)
    assert (run.state, run.state_name) == ("failed", "Failed")


def test_the_flow_entry_runs_an_async_flow(tmp_path: Path) -> None:
    path = tmp_path / "async_entry.py"
    path.write_text("import asyncio\nfrom statewright.flows import flow, task\n\n"
                    "@task\nasync def one() -> int:\n    return 1\n\n"
                    "@flow\nasync def main_flow() -> int:\n    return await one() + 1\n")
    env = {**os.environ, "STATEWRIGHT_FLOWS_BACKEND": "memory"}
    done = subprocess.run([sys.executable, "-m", "statewright.flows.entry",
                           f"{path}:main_flow"], env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
