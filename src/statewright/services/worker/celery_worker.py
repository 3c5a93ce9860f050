"""A Celery worker that runs tries: ``statewright celery-worker``.

Its Celery task, for one message (a task instance id and the try number it was queued at), does
what the local executor does for one workload, with the same code (``TaskProcessPool``):

1. start the try through the door (queued → running), fenced on that try number: a task
   instance no longer queued at that try means the message is a duplicate or stale, and it is
   dropped;
2. run the try in a task process of the pool, so that a crash, ``os._exit`` or segfault of the
   task ends the try ``Crashed`` and never the worker; heartbeat it; kill it past its
   ``execution_timeout`` (``TimedOut``) or when its task instance leaves running elsewhere;
3. apply the outcome through ``outcome.apply_results``;
4. return, and only then is the message acknowledged (``acks_late``): a worker killed mid-try
   leaves its message unacknowledged and the broker delivers it again, to be dropped by step 1;
   the try it was running is a zombie that the scheduler's reaper ends ``Crashed``.

Celery runs the task in a pool of threads (one per task process): each thread waits while the
pool's supervisor thread does the work. A warm shutdown (SIGTERM, or the first Ctrl-C) asks the
running tries to stop (``TaskProcessPool.interrupt``): each ends ``Interrupted`` within
``STATEWRIGHT_SHUTDOWN_GRACE_SECONDS``, and its message is acknowledged. A cold shutdown
(SIGQUIT, or Ctrl-C again) gives every message back to the broker and kills the task
processes: their tries are zombies that the scheduler's reaper ends ``Crashed``, and the
messages, delivered again, are dropped by the fence.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from celery import Celery
from celery.concurrency.thread import TaskPool as ThreadTaskPool
from celery.exceptions import Reject
from sqlalchemy import Engine

from statewright.core.clock import Clock, utcnow
from statewright.core.limits import InputLimits
from statewright.core.transitions import Actor
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.celery import TASK_NAME, make_celery_app
from statewright.services.worker.dag_callbacks import DagCallbackRunner
from statewright.services.worker.process_pool import (
    NOT_STARTED,
    START_FAILED,
    Done,
    TaskProcessPool,
)
from statewright.services.worker.task_runner import HOSTNAME

log = logging.getLogger("statewright.worker.celery")

START_RETRY_SECONDS = 2.0
"""A start that failed (the database was unreachable) is tried again after this long."""
ABANDONED = "abandoned"
"""The worker is stopping at once (cold shutdown): the message goes back to the broker."""


def lease_for(zombie_threshold: float | None, heartbeat: float) -> float | None:
    """How long a try may go without a heartbeat reaching the database before its worker kills
    it: well inside the scheduler's zombie threshold, so the process is gone before the reaper
    lets a next try start (None: never)."""
    if zombie_threshold is None:
        return None
    return max(zombie_threshold * 0.5, zombie_threshold - 2 * heartbeat - 5.0)


class CeleryWorker:
    def __init__(
        self,
        engine: Engine,
        *,
        broker_url: str,
        queues: Sequence[str],
        concurrency: int = 4,
        logs_folder: Path | None = None,
        heartbeat_seconds: float = 5.0,
        visibility_timeout: float = 3600.0,
        clock: Clock = utcnow,
        name: str | None = None,
        zombie_threshold_seconds: float | None = 60.0,
        flow_calls: bool = False,
        shutdown_grace_seconds: float | None = None,
        input_limits: InputLimits | None = None,
    ) -> None:
        self.engine = engine
        self.shutdown_grace_seconds = shutdown_grace_seconds
        self.queues = list(queues)
        self.concurrency = max(1, concurrency)
        self.clock = clock
        self.name = name or f"statewright-{os.getpid()}@{HOSTNAME}"
        self.pool = TaskProcessPool(engine, processes=self.concurrency, logs_folder=logs_folder,
                                    clock=clock, heartbeat_seconds=heartbeat_seconds,
                                    views=DagViewCache(), start_actor=Actor.WORKER,
                                    lease_seconds=lease_for(zombie_threshold_seconds,
                                                            heartbeat_seconds),
                                    input_limits=input_limits)
        self.app = make_celery_app(broker_url, visibility_timeout=visibility_timeout,
                                   queues=self.queues)
        self._register_task(self.app)
        self.flow_calls: Any = None
        if flow_calls:  # task calls of flows (CeleryTaskRunner) as well
            from statewright.services.worker.flow_calls import register_flow_calls

            self.flow_calls = register_flow_calls(self.app, self.concurrency)
        self._dag_callbacks: Any = None
        self._worker: Any = None
        self._abandon = threading.Event()

    def run_message(self, ti_id: int, try_number: int) -> Done:
        """Start, run and finish the try that one message names; returns how it ended."""
        finished = threading.Event()
        box: list[Done] = []

        def on_done(done: Done) -> None:
            box.append(done)
            finished.set()

        self.pool.submit([ti_id], fences={ti_id: try_number}, on_done=on_done)
        while not finished.wait(0.5):
            if self._abandon.is_set():
                return Done(ti_id, ABANDONED)
        done = box[0]
        if done.outcome == NOT_STARTED:
            log.info("dropped the message for task instance %s queued at try %s: it is no "
                     "longer queued at that try (a duplicate or a stale message)",
                     ti_id, try_number)
        else:
            log.info("task instance %s try %s: %s", ti_id, done.try_number, done.outcome)
        return done

    def _register_task(self, app: Celery) -> None:
        worker = self

        @app.task(name=TASK_NAME, bind=True, acks_late=True, ignore_result=True,
                  max_retries=None)
        def run_task_instance(task: Any, ti_id: int, try_number: int) -> str:
            done = worker.run_message(int(ti_id), int(try_number))
            if done.outcome == START_FAILED:
                # Nothing started: the database could not be reached. Send the message again.
                raise task.retry(countdown=START_RETRY_SECONDS)
            if done.outcome == ABANDONED:
                raise Reject("the worker is stopping", requeue=True)
            return done.outcome

    def start(self) -> None:
        """Start the task processes and the DAG callback runner (not the Celery consumer)."""
        self.pool.start()
        self._dag_callbacks = DagCallbackRunner(self.engine, clock=self.clock,
                                                context=self.pool.context).start()

    def run(self, loglevel: str = "INFO") -> int:
        """Consume the queues until a signal stops the worker (warm shutdown: running tries
        finish first); returns the exit code."""
        from celery.signals import worker_shutting_down

        self.start()
        worker_shutting_down.connect(self._on_shutting_down, weak=False)
        try:
            self._worker = self.app.Worker(
                hostname=self.name, pool_cls=_threads_pool(self._abandon.set),
                concurrency=self.concurrency,
                queues=self.queues, loglevel=loglevel, quiet=True, without_mingle=True,
                without_gossip=True, optimization="fair",
            )
            self._worker.start()
            return int(getattr(self._worker, "exitcode", 0) or 0)
        finally:
            worker_shutting_down.disconnect(self._on_shutting_down)
            self.stop()

    def _on_shutting_down(self, sig: Any = None, how: Any = None, **_: Any) -> None:
        """A warm shutdown (SIGTERM): with a grace period, the running tries are asked to stop
        and end Interrupted within it; their messages are acknowledged as they end."""
        if how == "Warm" and self.shutdown_grace_seconds is not None:
            log.info("stopping: running tries get %s s to end, then end Interrupted",
                     self.shutdown_grace_seconds)
            self.pool.interrupt(self.shutdown_grace_seconds)

    def stop(self, timeout: float = 10.0) -> None:
        if self._dag_callbacks is not None:
            self._dag_callbacks.stop(timeout)
            self._dag_callbacks = None
        self.pool.stop(timeout)
        if self.flow_calls is not None:
            self.flow_calls.stop()
        self.app.close()


def _threads_pool(on_cold_shutdown: Any) -> type[ThreadTaskPool]:
    """Celery's thread pool, where a cold shutdown's request to kill a running job releases the
    threads waiting for their tries (the task processes are stopped with the worker)."""

    class TryThreads(ThreadTaskPool):
        def terminate_job(self, pid: Any, signal: Any = None) -> None:
            on_cold_shutdown()

    return TryThreads
