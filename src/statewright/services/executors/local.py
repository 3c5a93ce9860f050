"""The local executor: a pool of task processes in the scheduler's process.

The pool (``services.worker.process_pool.TaskProcessPool``) starts the tries (queued → running,
one transaction), runs each in a task process that holds no database session, applies the
outcomes in batches, heartbeats its running tries and kills a try whose task instance is no
longer running its try. A task process that dies (segfault, ``os._exit``, OOM kill) is replaced;
its try ends ``Crashed``; a try past its ``execution_timeout`` ends ``TimedOut``. The executor
adds the scheduler's side: its identity, its free slots, and a queue of task instances waiting
for a process. It also runs the DAG-level callbacks (``DagCallbackRunner``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from statewright.core.clock import Clock, utcnow
from statewright.core.transitions import Actor
from statewright.services.dag_view import DagViewCache
from statewright.services.worker.dag_callbacks import DagCallbackRunner
from statewright.services.worker.process_pool import TaskProcessPool
from statewright.services.worker.task_runner import HOSTNAME


class LocalExecutor:
    def __init__(
        self,
        engine: Engine,
        *,
        parallelism: int = 4,
        logs_folder: Path | None = None,
        clock: Clock = utcnow,
        heartbeat_seconds: float = 5.0,
        views: DagViewCache | None = None,
        queue_depth: int | None = None,
    ) -> None:
        self.engine = engine
        self.parallelism = max(1, parallelism)
        self.clock = clock
        self.queue_depth = queue_depth if queue_depth is not None else self.parallelism
        self.pool = TaskProcessPool(engine, processes=self.parallelism, logs_folder=logs_folder,
                                    clock=clock, heartbeat_seconds=heartbeat_seconds,
                                    views=views, start_actor=Actor.EXECUTOR)
        self.views = self.pool.views
        self.identity = f"local:{HOSTNAME}:{os.getpid()}"
        self._dag_callbacks: Any = None

    # -- executor interface --------------------------------------------------------------------

    def slots_available(self) -> int:
        busy = self.pool.busy_count()
        pending = self.pool.pending_count()
        return max(0, self.parallelism + self.queue_depth - busy - pending)

    def queue_workloads(self, ti_ids: Sequence[int]) -> None:
        self.pool.submit(ti_ids)

    def start(self) -> None:
        self.pool.start()
        self._dag_callbacks = DagCallbackRunner(self.engine, clock=self.clock,
                                                context=self.pool.context).start()

    def stop(self, timeout: float = 10.0) -> None:
        if self._dag_callbacks is not None:
            self._dag_callbacks.stop(timeout)
        self.pool.stop(timeout)

    # for tests and the CLI
    @property
    def crashed_tries(self) -> int:
        return self.pool.crashed_tries

    @property
    def logs_folder(self) -> Path | None:
        return self.pool.logs_folder

    @property
    def heartbeat_seconds(self) -> float:
        return self.pool.heartbeat_seconds

    def busy_count(self) -> int:
        return self.pool.busy_count()

    def now(self) -> datetime:
        return self.clock()
