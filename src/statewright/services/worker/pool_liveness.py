"""How the task process pool knows its tries still run: the supervisor's heartbeat (which also
kills a try the database no longer runs) and, with ``lease_seconds``, the lease watchdog; and
whether a transition took one of its tries away from running."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from statewright.core.clock import Clock
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import task_instances as ti_repo
from statewright.services.worker.pool_parts import Child

log = logging.getLogger("statewright.worker.pool")

_OWN_ACTORS = frozenset({Actor.WORKER.value, Actor.EXECUTOR.value})
_LEASE = "lease"


class PoolLiveness:
    """The heartbeat and lease watchdog of :class:`TaskProcessPool` (mixed into it)."""

    engine: Engine
    clock: Clock
    lease_seconds: float | None
    _children: list[Child]
    _guard: threading.RLock
    _stop: threading.Event

    if TYPE_CHECKING:  # given by TaskProcessPool, which this is mixed into
        def _kill(self, c: Child, grace: float = 3.0) -> None: ...

        def _poke(self) -> None: ...

    def _heartbeat(self) -> None:
        running = [(c.workload.ti_id, c.workload.try_number) for c in self._children
                   if c.workload is not None]
        if not running:
            return
        now = self.clock()
        confirmed_at = time.monotonic()
        with transaction(self.engine) as conn:
            ti_repo.heartbeat(conn, running, now)
            still = ti_repo.still_running(conn, running)
        for c in self._children:
            w = c.workload
            if w is not None and (w.ti_id, w.try_number) in still:
                c.confirmed = max(c.confirmed, confirmed_at)
        for c in self._children:
            w = c.workload
            if w is not None and (w.ti_id, w.try_number) not in still:
                log.warning("%s.%s try %s is no longer running in the database; killing it",
                            w.dag_id, w.task_id, w.try_number)
                c.kill_reason = "superseded"
                self._kill(c)

    def _watch_leases(self) -> None:
        """Kill tries the database has not confirmed for ``lease_seconds``; runs in its own
        thread, so a supervisor blocked on the database cannot hold it up."""
        assert self.lease_seconds is not None
        period = min(1.0, self.lease_seconds / 4)
        while not self._stop.wait(period):
            with self._guard:
                now = time.monotonic()
                for c in list(self._children):
                    w = c.workload
                    if w is None or c.kill_reason is not None:
                        continue
                    if now - c.confirmed > self.lease_seconds:
                        log.error("%s.%s try %s: no heartbeat reached the database for %.0fs; "
                                  "killing the try", w.dag_id, w.task_id, w.try_number,
                                  now - c.confirmed)
                        c.kill_reason = _LEASE
                        try:
                            os.kill(c.process.pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                        self._poke()


def leaves_running_elsewhere(events: Sequence[door.TransitionEvent], ti_ids: Any) -> bool:
    """Whether one of ``ti_ids`` left running through someone else than the worker (a person
    marked, cleared or cancelled it; the scheduler reaped it)."""
    return any(e.entity == door.ENTITY_TI and e.frm == TI.RUNNING.value and e.to != e.frm
               and e.actor not in _OWN_ACTORS and e.entity_id in ti_ids for e in events)
