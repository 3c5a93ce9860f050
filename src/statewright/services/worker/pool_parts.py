"""What the task process pool keeps of each submission and each task process, and how a
submission ended (``Done``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from statewright.services.worker.memory import MemoryWatch
from statewright.services.worker.workload import Workload

log = logging.getLogger("statewright.worker.pool")

# How a submission ended (``Done.outcome``), besides the state its try reached.
NOT_STARTED = "not_started"
"""The task instance was not queued (at the expected try): a lost race or a duplicate."""
START_FAILED = "start_failed"
"""Starting the try raised (the database was unreachable, …): nothing was started."""
STOPPED = "stopped"
"""The try was killed because its task instance no longer ran it in the database."""
LOST = "lost"
"""The try reported, but its task instance had left running meanwhile."""
UNAPPLIED = "unapplied"
"""The try ended but its outcome could not be written; the zombie reaper will end it."""


@dataclass(frozen=True)
class Done:
    ti_id: int
    outcome: str
    """The state the try reached (``success``, ``up_for_retry``, …) or one of the constants."""
    try_number: int | None = None
    """The try that ran (None when none started)."""


OnDone = Callable[[Done], None]


@dataclass
class Request:
    ti_id: int
    fence: int | None
    on_done: OnDone | None


@dataclass
class Child:
    process: Any
    conn: Connection
    lifeline: Connection
    """Held open while the process should live; see ``lifeline``."""
    workload: Workload | None = None
    on_done: OnDone | None = None
    started_at: float = 0.0
    confirmed: float = 0.0
    """When the database last confirmed the try (its start or a heartbeat), monotonic."""
    deadline: float | None = None
    kill_reason: str | None = None
    idle_since: float = 0.0
    """When it last became idle, monotonic: an idle process past ``idle_seconds`` is retired."""
    imported: float = 0.0
    """Seconds it spent importing DAG files: what letting it go would cost again."""
    tries: int = 0
    """Tries it was given: past ``max_tries_per_process`` it is retired (recycled)."""
    memory: MemoryWatch = field(default_factory=MemoryWatch)

    @property
    def idle(self) -> bool:
        return self.workload is None



def close_pipes(*conns: Connection) -> None:
    for conn in conns:
        try:
            conn.close()
        except OSError:
            pass


def notify(on_done: OnDone | None, done: Done) -> None:
    if on_done is None:
        return
    try:
        on_done(done)
    except Exception:  # a caller's callback never breaks the supervisor
        log.exception("on_done callback failed for task instance %s", done.ti_id)
