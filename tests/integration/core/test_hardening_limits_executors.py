"""A workload that cannot be handed to a task process fails its try and frees its process: in
the task process pool (past the input limits, or unpicklable: a conf 500 lists deep stops
pickle with RecursionError) and in the local executor under the real scheduler, where eight runs
with such a conf, triggered through the API, leave an ordinary DAG free to run to success and
nothing ``running``. On SQLite and PostgreSQL."""

from __future__ import annotations

import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, select

from statewright.api import create_app
from statewright.config import load_settings
from statewright.core.clock import utcnow
from statewright.core.limits import InputLimits
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.tables import task_instance
from statewright.services.dag_processor import DagProcessor
from statewright.services.dag_runs import trigger_dag
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler
from statewright.services.worker.process_pool import Done, TaskProcessPool

DAGS = textwrap.dedent('''
    from datetime import timedelta
    from statewright.sdk import DAG, task
    from statewright.sdk.operators import TriggerDagRunOperator

    with DAG("victim"):
        @task(retries=2, retry_delay=timedelta(seconds=0))
        def reads_conf(**context):
            return len(context["dag_run"].conf)

        reads_conf()

    deep = []
    for _ in range(499):
        deep = [deep]

    class Untemplated(TriggerDagRunOperator):
        template_fields = ()

    with DAG("returns_deep"):  # its try's outcome carries the conf: it cannot be pickled
        Untemplated(task_id="deep_value", trigger_dag_id="ordinary", conf={"a": deep})

    with DAG("ordinary"):
        @task
        def first():
            return 1

        @task
        def second(value):
            return value + 1

        second(first())
''')

NO_LIMITS = InputLimits(max_depth=10**6, max_bytes=2**40, max_items=10**9)


def deep(levels: int) -> Any:
    """A list nested ``levels`` levels deep."""
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.fixture
def dags(engine: Engine, tmp_path: Path) -> Engine:
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "dags.py").write_text(DAGS)
    DagProcessor(engine, tmp_path / "dags").run_once()
    return engine


def _queue(engine: Engine, dag_id: str, task_id: str, conf: Any = None) -> int:
    now = utcnow()
    with transaction(engine) as conn:
        run_pk, _ = trigger_dag(conn, dag_id, now=now, actor=Actor.USER, conf=conf)
        ti = ti_repo.get_by_key(conn, run_pk, task_id)
        for frm, to in ((TI.NONE, TI.SCHEDULED), (TI.SCHEDULED, TI.QUEUED)):
            door.set_task_instance_state(conn, ti.id, frm=frm, to=to, actor=Actor.SCHEDULER,
                                         now=now)
    return int(ti.id)


class _Collector:
    def __init__(self) -> None:
        self.done: dict[int, Done] = {}
        self._event = threading.Event()

    def __call__(self, done: Done) -> None:
        self.done[done.ti_id] = done
        self._event.set()

    def wait_for(self, ti_ids: list[int], timeout: float = 30) -> dict[int, Done]:
        deadline = time.monotonic() + timeout
        while not all(t in self.done for t in ti_ids):
            assert time.monotonic() < deadline, f"only {self.done} reported"
            self._event.wait(0.1)
            self._event.clear()
        return self.done


def _running(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(task_instance).where(
            task_instance.c.state == TI.RUNNING.value)).scalar_one())


@pytest.fixture
def pool_of(dags: Engine) -> Iterator[Callable[[InputLimits | None], TaskProcessPool]]:
    pools: list[TaskProcessPool] = []

    def make(limits: InputLimits | None) -> TaskProcessPool:
        pool = TaskProcessPool(dags, processes=1, heartbeat_seconds=0.5, input_limits=limits,
                               start_actor=Actor.WORKER)
        pool.start()
        pools.append(pool)
        return pool

    yield make
    for pool in pools:
        pool.stop()


def test_an_unpicklable_workload_fails_its_try_and_its_one_process_runs_the_next(
        dags: Engine, pool_of: Callable[[InputLimits | None], TaskProcessPool]) -> None:
    pool = pool_of(NO_LIMITS)  # no limit stops it first: pickle itself fails
    bad = _queue(dags, "victim", "reads_conf", {"a": deep(500)})
    good = _queue(dags, "ordinary", "first")
    got = _Collector()
    pool.submit([bad], on_done=got)
    pool.submit([good], on_done=got)
    done = got.wait_for([bad, good])
    assert done[bad].outcome == "failed" and done[good].outcome == "success"
    with dags.connect() as conn:
        ti = ti_repo.get(conn, bad)
        history = ti_repo.history_of(conn, bad)
    assert (ti.state, ti.try_number) == ("failed", 1)  # no retry: the next would fail alike
    assert "could not be handed to a task process: RecursionError" in ti.state_message
    assert [(h.try_number, h.state) for h in history] == [(1, "failed")]
    assert "RecursionError" in (history[0].error or "")
    assert _running(dags) == 0
    assert pool.busy_count() == 0


def test_a_workload_past_the_depth_limit_fails_naming_the_limit(
        dags: Engine, pool_of: Callable[[InputLimits | None], TaskProcessPool]) -> None:
    pool = pool_of(None)  # the settings' limits: depth 64
    bad = _queue(dags, "victim", "reads_conf", {"a": deep(100)})
    fine = _queue(dags, "victim", "reads_conf", {"a": deep(60)})
    got = _Collector()
    pool.submit([bad, fine], on_done=got)
    done = got.wait_for([bad, fine])
    assert done[bad].outcome == "failed" and done[fine].outcome == "success"
    with dags.connect() as conn:
        message = ti_repo.get(conn, bad).state_message
    assert "the run's conf nests more than 64 levels deep" in message
    assert "STATEWRIGHT_MAX_INPUT_DEPTH" in message
    assert _running(dags) == 0


@pytest.fixture
def deployment(dags: Engine, tmp_path: Path, auth_headers: Any) -> Iterator[dict[str, Any]]:
    """The scheduler and the local executor (two processes) on the DAGs, and an API client
    whose input limits let a deep conf through (as for runs stored before the limits)."""
    views = DagViewCache()
    executor = LocalExecutor(dags, parallelism=2, queue_depth=0, views=views,
                             logs_folder=tmp_path / "logs", heartbeat_seconds=0.5,
                             input_limits=NO_LIMITS)
    executor.start()
    scheduler = Scheduler(dags, executor, views=views)
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(stop,), daemon=True)
    thread.start()
    settings = load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home"),
                              "STATEWRIGHT_MAX_INPUT_DEPTH": "100000"})
    try:
        with TestClient(create_app(engine=dags, settings=settings),
                        headers=auth_headers(dags)) as client:
            yield {"engine": dags, "client": client, "executor": executor}
    finally:
        stop.set()
        thread.join(10)
        executor.stop()


def _wait_for_runs(engine: Engine, dag_id: str, timeout: float = 60) -> list[Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            runs = run_repo.list_runs(conn, dag_id)
        if runs and all(r.state in ("success", "failed") for r in runs):
            return runs
        time.sleep(0.05)
    raise AssertionError(f"the runs of {dag_id} did not finish in {timeout}s")


def test_eight_runs_with_a_conf_500_deep_leave_an_ordinary_dag_to_run(
        deployment: dict[str, Any]) -> None:
    engine, client = deployment["engine"], deployment["client"]
    for _ in range(8):
        res = client.post("/api/v1/dags/victim/dagRuns", json={"conf": {"a": deep(500)}})
        assert res.status_code == 200, res.text
    assert client.post("/api/v1/dags/ordinary/dagRuns", json={}).status_code == 200
    [ordinary] = _wait_for_runs(engine, "ordinary")
    assert ordinary.state == "success"
    victims = _wait_for_runs(engine, "victim")
    assert [r.state for r in victims] == ["failed"] * 8
    with engine.connect() as conn:
        messages = {t.state_message for r in victims for t in ti_repo.by_run(conn, r.id)}
    assert len(messages) == 1 and "RecursionError" in messages.pop()
    assert _running(engine) == 0
    assert deployment["executor"].busy_count() == 0
    res = client.get("/api/v1/dags/victim/dagRuns")
    assert res.status_code == 200
    assert all(r["read_error"] for r in res.json()["dag_runs"])


def test_a_result_that_cannot_be_sent_back_fails_its_try_and_the_process_runs_the_next(
        dags: Engine, pool_of: Callable[[InputLimits | None], TaskProcessPool]) -> None:
    pool = pool_of(None)
    bad = _queue(dags, "returns_deep", "deep_value")
    good = _queue(dags, "ordinary", "first")
    got = _Collector()
    pool.submit([bad, good], on_done=got)
    done = got.wait_for([bad, good])
    assert done[bad].outcome == "failed" and done[good].outcome == "success"
    with dags.connect() as conn:
        ti = ti_repo.get(conn, bad)
    assert ti.state_name == "Failed", ti.state_message  # not Crashed: the process reported
    assert "could not be sent to its worker: RecursionError" in ti.state_message
    assert _running(dags) == 0
