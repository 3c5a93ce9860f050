"""CeleryTaskRunner: a flow's task calls run on a real `statewright celery-worker --flow-calls`
(Redis broker), their states recorded through the door by the flow's process; an argument that
cannot be sent fails the task run with a message naming it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from tests.integration.celery.test_celery_executor import _reachable
from tests.integration.flows.conftest import runs, task_history, task_rows

from statewright.crypto import generate_key
from statewright.flows import CeleryTaskRunner, flow, task
from statewright.services.flows.recorder import DbBackend

REDIS = os.environ.get("STATEWRIGHT_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


@pytest.fixture
def worker_queue(engine: Engine, tmp_path: Path) -> Iterator[str]:
    _reachable(REDIS)
    queue = f"sw_flows_{uuid.uuid4().hex[:10]}"
    env = {**os.environ, "STATEWRIGHT_HOME": str(tmp_path / "home"),
           "STATEWRIGHT_DATABASE_URL": engine.url.render_as_string(hide_password=False),
           "STATEWRIGHT_CELERY_BROKER_URL": REDIS, "STATEWRIGHT_FERNET_KEY": generate_key(),
           "STATEWRIGHT_DAGS_FOLDER": str(tmp_path / "dags")}
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "statewright.cli.main", "celery-worker", "--queues", queue,
             "--concurrency", "2", "--flow-calls", "--name", f"{queue}@test"],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield queue
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        print(log.read_text(errors="replace")[-3000:])


def test_task_calls_run_on_a_celery_worker_with_their_states_recorded(
        engine: Engine, recorded: DbBackend, worker_queue: str, tmp_path: Path) -> None:
    marker = tmp_path / "tried"

    @task
    def double(x: int) -> tuple[int, int]:
        import os

        return x * 2, os.getpid()

    @task(retries=1, retry_delay_seconds=0)
    def flaky(path: str) -> str:
        from pathlib import Path

        if not Path(path).exists():
            Path(path).write_text("once")
            raise ValueError("first try fails")
        return "second try"

    @task
    def locked(lock: object) -> None:
        return None

    runner = CeleryTaskRunner(broker_url=REDIS, queue=worker_queue, timeout=90)

    @flow(task_runner=runner)
    def on_celery(n: int) -> tuple[list[int], set[int], str, str]:
        futures = double.map(range(n))
        pairs = [f.result() for f in futures]
        refused = locked.submit(threading.Lock())
        refused.wait()
        return ([v for v, _ in pairs], {p for _, p in pairs}, flaky.submit(str(marker)).result(),
                str(refused.state.message))

    values, pids, retried, refused = on_celery(4)
    assert values == [0, 2, 4, 6]
    assert os.getpid() not in pids  # ran in the worker's processes
    assert retried == "second try"
    assert "argument 'lock'" in refused and "cannot be sent" in refused
    (run,) = runs(engine)
    assert (run.state, run.state_name) == ("success", "Completed")
    rows = task_rows(engine)
    assert {t: r.state for t, r in rows.items()} == {
        "double-0": "success", "double-1": "success", "double-2": "success",
        "double-3": "success", "flaky-0": "success", "locked-0": "failed"}
    assert task_history(engine, "flaky-0") == ["Pending", "Running", "Retrying", "Completed"]


def test_the_runner_needs_a_redis_broker() -> None:
    with pytest.raises(ValueError, match="Redis broker"):
        CeleryTaskRunner(broker_url="amqp://guest:guest@127.0.0.1:5672//")
