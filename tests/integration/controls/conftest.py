"""The real scheduler and LocalExecutor around a DAG file, for the kill paths of the controls."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.core.states import TI
from statewright.core.transitions import Actor, dag_run_edge, task_instance_edge
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.sdk.loader import load_dag_file
from statewright.services.dag_runs import create_run
from statewright.services.dag_view import DagView, DagViewCache
from statewright.services.executors.local import LocalExecutor
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig


class Stack:
    """A DAG file, the database, a scheduler thread and a LocalExecutor."""

    def __init__(self, engine: Engine, folder: Path) -> None:
        self.engine = engine
        self.folder = folder
        self.executor: LocalExecutor | None = None
        self.scheduler: Scheduler | None = None
        self.loops = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def load(self, source: str) -> None:
        path = self.folder / "dags.py"
        path.write_text(source.replace("@MARKS@", str(self.folder)))
        result = load_dag_file(path)
        assert result.error is None, result.error
        with transaction(self.engine) as conn:
            for dag in result.dags.values():
                dag_repo.upsert_dag(conn, dag.serialize(), now=utcnow())
                dag_repo.set_paused(conn, dag.dag_id, False)

    def new_run(self, dag_id: str, run_id: str = "r1") -> str:
        with transaction(self.engine) as conn:
            row = dag_repo.get_dag(conn, dag_id)
            create_run(conn, DagView(row.serialized, row.dag_hash), now=utcnow(),
                       actor=Actor.USER, run_id=run_id)
        return run_id

    def start(self, *, heartbeat_seconds: float = 0.5) -> None:
        views = DagViewCache()
        self.executor = LocalExecutor(self.engine, parallelism=2, views=views,
                                      heartbeat_seconds=heartbeat_seconds,
                                      logs_folder=self.folder / "logs")
        self.executor.start()
        self.scheduler = Scheduler(self.engine, self.executor, views=views,
                                   config=SchedulerConfig(idle_seconds=0.2))
        once = self.scheduler.run_once

        def counted(**kwargs: Any) -> Any:
            self.loops += 1
            return once(**kwargs)

        self.scheduler.run_once = counted  # type: ignore[method-assign]
        self._thread = threading.Thread(target=self.scheduler.run_forever, args=(self._stop,),
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(10)
        if self.executor:
            self.executor.stop()

    # -- reading --------------------------------------------------------------------------

    def run(self, dag_id: str, run_id: str = "r1") -> Any:
        with self.engine.connect() as conn:
            return run_repo.get_by_run_id(conn, dag_id, run_id)

    def tis(self, dag_id: str, run_id: str = "r1") -> dict[str, Any]:
        run = self.run(dag_id, run_id)
        with self.engine.connect() as conn:
            return {t.task_id: t for t in ti_repo.by_run(conn, run.id)}

    def ti(self, dag_id: str, task_id: str, run_id: str = "r1") -> Any:
        return self.tis(dag_id, run_id)[task_id]

    def history(self, dag_id: str, run_id: str = "r1") -> list[Any]:
        with self.engine.connect() as conn:
            return transitions_log.for_run(conn, dag_id, run_id)

    def tries(self, ti_id: int) -> list[Any]:
        with self.engine.connect() as conn:
            return ti_repo.history_of(conn, ti_id)

    def wait(self, what: Callable[[], Any], timeout: float = 30.0, why: str = "") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = what()
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"timed out after {timeout}s waiting for {why or what}")

    def wait_state(self, dag_id: str, task_id: str, *states: str, timeout: float = 30.0) -> Any:
        return self.wait(lambda: (ti := self.ti(dag_id, task_id)).state in states and ti,
                         timeout, f"{dag_id}.{task_id} in {states}")

    def wait_run(self, dag_id: str, *states: str, run_id: str = "r1",
                 timeout: float = 30.0) -> Any:
        return self.wait(lambda: (r := self.run(dag_id, run_id)).state in states and r,
                         timeout, f"run {run_id} of {dag_id} in {states}")

    def mark(self, name: str) -> Path:
        return self.folder / name


def check_history(rows: list[Any]) -> None:
    for r in rows:
        if r.from_state is None or r.from_state == r.to_state:
            continue
        if r.entity == "task_instance":
            task_instance_edge(TI(r.from_state), TI(r.to_state), Actor(r.actor))
        else:
            from statewright.core.states import RUN

            dag_run_edge(RUN(r.from_state), RUN(r.to_state), Actor(r.actor))


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child of a live parent still answers kill(0)
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False


@pytest.fixture
def stack(engine: Engine, tmp_path: Path) -> Iterator[Stack]:
    s = Stack(engine, tmp_path)
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def allowed() -> Callable[[list[Any]], None]:
    return check_history


@pytest.fixture
def alive() -> Callable[[int], bool]:
    return pid_alive
