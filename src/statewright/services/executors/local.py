"""The local executor: a pool of task processes run by a supervisor process of its own.

The supervisor process (``local_supervisor``) runs a ``services.worker.process_pool``
``TaskProcessPool``: it starts the tries (queued → running, one transaction), runs each in a task
process that holds no database session, applies the outcomes in batches, heartbeats its running
tries and kills a try whose task instance is no longer running its try. A task process that dies
(segfault, ``os._exit``, OOM kill) is replaced; its try ends ``Crashed``; a try past its
``execution_timeout`` ends ``TimedOut``.

This class is the scheduler's side: its identity, its free slots (``parallelism`` processes plus
``queue_depth`` tries waiting for one, minus the submissions not yet ended; by default twice as
many waiting as processes, so that a scheduler pass queues a batch worth its round trips), the
hand-over of the
task instances the scheduler queued, and the transitions the supervisor committed, handed to this
process's listeners so that the scheduler wakes at once. A supervisor that dies is started again
(its tries are ended ``Crashed`` by the scheduler's zombie reaper). It also runs the DAG-level
callbacks (``DagCallbackRunner``).
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing as mp
import os
import threading
import time
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from statewright.core.clock import utcnow
from statewright.core.limits import InputLimits
from statewright.crypto import FernetKeyError
from statewright.db import transition as door
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.local_supervisor import SupervisorConfig, supervisor_main
from statewright.services.worker import deferral, fork_server
from statewright.services.worker.dag_callbacks import DagCallbackRunner
from statewright.services.worker.process_pool import leaves_running_elsewhere
from statewright.services.worker.task_runner import HOSTNAME

log = logging.getLogger("statewright.executor.local")


class LocalExecutor:
    def __init__(
        self,
        engine: Engine,
        *,
        parallelism: int = 4,
        logs_folder: Path | None = None,
        heartbeat_seconds: float = 5.0,
        views: DagViewCache | None = None,
        queue_depth: int | None = None,
        start_timeout: float = 60.0,
        input_limits: InputLimits | None = None,
    ) -> None:
        self.engine = engine
        self.input_limits = input_limits
        self.parallelism = max(1, parallelism)
        # Twice the processes: on PostgreSQL a scheduler pass costs ~20 round trips whatever it
        # queues, and a deeper queue lets each pass queue more (fan-out of 10,000:
        # 249-279 -> 321-374 task instances/s; on SQLite the same either way).
        self.queue_depth = queue_depth if queue_depth is not None else 2 * self.parallelism
        self.logs_folder = logs_folder
        self.heartbeat_seconds = heartbeat_seconds
        self.start_timeout = start_timeout
        self.views = views or DagViewCache()
        self.identity = f"local:{HOSTNAME}:{os.getpid()}"
        self.context = mp.get_context("forkserver")
        self.crashed_tries = 0
        self.supervisor_pid: int | None = None
        self._in_flight: Counter[int] = Counter()
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._stopping = threading.Event()
        self._process: Any = None
        self._conn: Any = None
        self._lifeline: Any = None
        self._reader: threading.Thread | None = None
        self._dag_callbacks: Any = None
        self._remove_listener: Any = None

    # -- executor interface --------------------------------------------------------------------

    def slots_available(self) -> int:
        with self._lock:
            in_flight = sum(self._in_flight.values())
        return max(0, self.parallelism + self.queue_depth - in_flight)

    def backlog(self) -> int:
        """Tries handed to the supervisor beyond its processes (they wait for one to be
        free): more than 0 means every process has its next try."""
        with self._lock:
            return sum(self._in_flight.values()) - self.parallelism

    def queue_workloads(self, ti_ids: Sequence[int]) -> None:
        ids = list(ti_ids)
        if not ids:
            return
        with self._lock:
            self._in_flight.update(ids)
        self._send(("submit", ids))

    def start(self) -> None:
        self.context.set_forkserver_preload(fork_server.PRELOAD)
        self._spawn()
        # Not a daemon (it has task processes of its own): stop it before the interpreter
        # waits for its children at exit.
        atexit.register(self.stop)
        self._remove_listener = door.add_transition_listener(self._on_transitions)
        self._dag_callbacks = DagCallbackRunner(self.engine, context=self.context).start()

    def stop(self, timeout: float = 10.0, *, grace: float | None = None) -> None:
        """Stop the supervisor process. With ``grace`` (a graceful shutdown: SIGTERM), its
        running tries are asked to stop within ``grace`` seconds and end ``Interrupted``, and
        the tries it did not start go back to scheduled."""
        atexit.unregister(self.stop)
        if self._stopping.is_set():
            return
        self._stopping.set()
        if self._remove_listener is not None:
            self._remove_listener()
        if self._dag_callbacks is not None:
            self._dag_callbacks.stop(timeout)
        self._send(None if grace is None else ("stop", grace))
        if self._process is not None:
            self._process.join(timeout + 5.0 + (grace or 0.0))
            if self._process.is_alive():
                self._process.kill()
                self._process.join(1.0)
        if self._reader is not None:
            self._reader.join(timeout)
        for c in (self._conn, self._lifeline):
            if c is not None:
                c.close()

    def busy_count(self) -> int:
        """Submissions not yet ended (running, or waiting in the supervisor for a process)."""
        with self._lock:
            return sum(self._in_flight.values())

    def now(self) -> datetime:
        return utcnow()

    # -- the supervisor process ----------------------------------------------------------------

    def _config(self) -> SupervisorConfig:
        cipher = deferral.installed_cipher()
        if cipher is None:
            try:
                cipher = deferral.current_cipher()
            except FernetKeyError:
                cipher = None  # a deferring task fails with the clear error in the supervisor
        return SupervisorConfig(
            database_url=self.engine.url.render_as_string(hide_password=False),
            processes=self.parallelism, logs_folder=self.logs_folder,
            heartbeat_seconds=self.heartbeat_seconds, cipher=cipher,
            log_level=logging.getLogger().getEffectiveLevel(), input_limits=self.input_limits,
            environment=tuple(os.environ.items()), wake_origin=os.getpid())

    def _spawn(self) -> None:
        parent, child = self.context.Pipe()
        life_r, life_w = self.context.Pipe(duplex=False)
        process = self.context.Process(target=supervisor_main, args=(child, life_r,
                                                                     self._config()),
                                       name="statewright-local-executor")
        fork_server.start(process)
        child.close()
        life_r.close()
        if not parent.poll(self.start_timeout):
            process.kill()
            raise RuntimeError(f"the local executor's supervisor process did not start within "
                               f"{self.start_timeout:.0f}s")
        try:
            message = parent.recv()
        except (EOFError, OSError):
            process.join(5.0)
            raise RuntimeError(f"the local executor's supervisor process exited at start (exit "
                               f"code {process.exitcode}); its error is in the log") from None
        assert message[0] == "ready", message
        self._process, self._conn, self._lifeline = process, parent, life_w
        self.supervisor_pid = process.pid
        self._reader = threading.Thread(target=self._read, args=(parent,),
                                        name="local-executor-reader", daemon=True)
        self._reader.start()

    def _send(self, message: Any) -> None:
        with self._send_lock:
            if self._conn is None:
                return
            try:
                self._conn.send(message)
            except (OSError, BrokenPipeError, ValueError):
                pass  # the supervisor is gone: the reader starts a new one

    def _read(self, conn: Any) -> None:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message[0] != "batch":
                continue
            _, finished, events, crashed = message
            with self._lock:  # free the slots first: the events wake the scheduler
                self._in_flight.subtract(finished)
                self._in_flight = +self._in_flight
                self.crashed_tries = crashed
            door.relay(events)
        if not self._stopping.is_set():
            self._restart()

    def _restart(self) -> None:
        code = self._process.exitcode if self._process is not None else None
        log.error("the local executor's supervisor process died (exit code %s); starting a new "
                  "one. Its tries end Crashed when the zombie reaper finds them.", code)
        with self._lock:
            self._in_flight.clear()
        while not self._stopping.is_set():
            try:
                with self._send_lock:
                    self._spawn()
                return
            except Exception:
                log.exception("could not start the supervisor process; retrying")
                time.sleep(1.0)

    def _on_transitions(self, events: Sequence[door.TransitionEvent]) -> None:
        with self._lock:
            mine = set(self._in_flight)
        if leaves_running_elsewhere(events, mine):
            self._send(("check",))
