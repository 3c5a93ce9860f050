"""The local executor's supervisor process: the task process pool, out of the scheduler's GIL.

``LocalExecutor`` starts this process (from the multiprocessing fork server: the scheduler's
process has threads and is never forked). It holds its own database engine and runs a
``TaskProcessPool``: it starts the tries the scheduler hands it, runs them in task processes,
applies their outcomes, heartbeats them and kills the ones the database no longer runs. The
scheduler, the triggerer, the DAG processor and the API of ``standalone`` keep the first
process's interpreter; starting and finishing tries, the executor's share of the database work,
runs in parallel here.

Messages, over one duplex pipe:

- scheduler → supervisor: ``("submit", [ti_id, …])``, ``("check",)`` (a control moved a try of
  ours out of running: check the running tries now), ``None`` (stop).
- supervisor → scheduler: ``("ready", pid)`` once the pool runs; after each pool step
  ``("batch", [ti_id finished, …], [TransitionEvent, …], crashed_tries)``: the submissions that
  ended (so the executor knows its free slots) and the transitions the step committed, which the
  scheduler's process hands to its own listeners (``door.relay``), so the scheduler and the
  triggerer wake at once as when the pool ran in their process.
- scheduler → supervisor ``("stop", grace)``: a graceful stop; running tries are asked to stop
  within ``grace`` seconds and end ``Interrupted`` (``services.worker.shutdown``).

The process dies with the scheduler's (``lifeline``), and its task processes with it.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statewright.core.limits import InputLimits
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db import wakeups
from statewright.db.engine import make_engine
from statewright.services.worker import deferral
from statewright.services.worker.lifeline import watch_lifeline
from statewright.services.worker.process_name import SUPERVISOR, set_process_name
from statewright.services.worker.process_pool import Done, TaskProcessPool

log = logging.getLogger("statewright.executor.local")


@dataclass(frozen=True)
class SupervisorConfig:
    database_url: str
    processes: int
    logs_folder: Path | None
    heartbeat_seconds: float
    cipher: Any
    """The trigger kwargs cipher of the scheduler's process (None: from the settings)."""
    log_level: int
    input_limits: InputLimits | None = None
    """A workload past them fails its try unsent (None: from the settings)."""
    environment: tuple[tuple[str, str], ...] = ()
    """The executor's environment when it started. This process and its task processes are
    forked by the fork server, whose environment is the one it started with (it may be older:
    another executor of the same process started it); they take this one instead, as a process
    started by the executor would inherit it."""
    wake_origin: int | None = None
    """The scheduler's process, which hears this one's events over the pipe: the wake-ups its
    transactions send other processes (``db.wakeups``) name it, and wake no scheduler."""


class _Relay:
    """Collects what a pool step did and sends it up in one message at the end of the step."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.pool: TaskProcessPool | None = None
        self._lock = threading.Lock()
        self._finished: list[int] = []
        self._events: list[door.TransitionEvent] = []

    def send(self, message: Any) -> None:
        with self._lock:
            self.conn.send(message)

    def on_events(self, events: Sequence[door.TransitionEvent]) -> None:
        with self._lock:
            self._events.extend(events)

    def on_done(self, done: Done) -> None:
        with self._lock:
            self._finished.append(done.ti_id)

    def flush(self) -> None:
        with self._lock:
            if not self._finished and not self._events:
                return
            finished, self._finished = self._finished, []
            events, self._events = self._events, []
            crashed = self.pool.crashed_tries if self.pool is not None else 0
            try:
                self.conn.send(("batch", finished, events, crashed))
            except OSError:
                pass  # the scheduler's process is gone; the lifeline ends this one
            except Exception:  # events that cannot be pickled: the slots are freed all the same
                log.exception("could not send the step's transitions to the scheduler")
                self.conn.send(("batch", finished, [], crashed))


def supervisor_main(conn: Any, lifeline: Any, config: SupervisorConfig) -> None:
    """The entry point of the supervisor process."""
    set_process_name(SUPERVISOR)
    # Ctrl-C in a terminal reaches the whole process group: the scheduler's process stops this
    # one in order (``None`` on the pipe), after the scheduler.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # SIGTERM to the whole process group (systemd, a container stop) too: the scheduler's
    # process asks this one to stop gracefully, so the running tries are handed back.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=watch_lifeline, args=(lifeline,), name="lifeline",
                     daemon=True).start()
    logging.basicConfig(level=config.log_level, format="%(name)s: %(message)s")
    if config.cipher is not None:
        deferral.install_cipher(config.cipher)
    if config.environment:
        os.environ.clear()
        os.environ.update(dict(config.environment))
    wakeups.set_origin(config.wake_origin)
    engine = make_engine(config.database_url)
    relay = _Relay(conn)
    pool = TaskProcessPool(engine, processes=config.processes, logs_folder=config.logs_folder,
                           heartbeat_seconds=config.heartbeat_seconds,
                           start_actor=Actor.EXECUTOR, after_step=relay.flush,
                           input_limits=config.input_limits)
    relay.pool = pool
    remove_listener = door.add_transition_listener(relay.on_events)
    pool.start()
    relay.send(("ready", os.getpid()))
    grace: float | None = None
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message is None:
                break
            if message[0] == "submit":
                pool.submit(message[1], on_done=relay.on_done)
            elif message[0] == "check":
                pool.check_now()
            elif message[0] == "stop":
                grace = message[1]
                break
    finally:
        pool.stop(grace=grace)
        remove_listener()
        relay.flush()
        engine.dispose()
