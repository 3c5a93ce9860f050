"""A graceful stop of a task process pool (SIGTERM to a worker, the scheduler's local executor
or ``standalone``): hand back what the pool holds instead of leaving ghosts.

- Each running try is asked to stop: its task process gets SIGTERM, which raises
  ``TaskInterrupted`` inside the task (its ``finally`` blocks run) and reports the try
  ``interrupted``. A try that does not report within the grace period
  (``STATEWRIGHT_SHUTDOWN_GRACE_SECONDS``) is killed. Either way it ends, through the state door,
  ``up_for_retry`` (retries left) or ``failed``, named ``Interrupted``; a try that finished on
  its own meanwhile keeps its own outcome.
- Task instances handed to the pool but not started yet go back from ``queued`` to
  ``scheduled``, so any scheduler (a surviving peer, or this one at its next start) queues them
  again.

A ``kill -9`` gives no such chance: the scheduler's recovery and zombie reaper end those tries
``Crashed``, as before.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from multiprocessing.connection import wait
from typing import TYPE_CHECKING, Any

from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.services.worker.outcome import INTERRUPTED, TryResult, apply_results
from statewright.services.worker.task_runner import HOSTNAME

if TYPE_CHECKING:
    from statewright.services.worker.pool_parts import Child
    from statewright.services.worker.process_pool import TaskProcessPool

HANDED_BACK = "the worker stopped before starting it; scheduled again"


def hand_back(pool: TaskProcessPool, grace: float) -> None:
    """Ask the pool's running tries to stop within ``grace`` seconds, then record how each
    ended and give the tries not started back to the scheduler, in one transaction."""
    from statewright.services.worker.pool_parts import Done, notify

    busy = [c for c in pool._children if c.workload is not None]
    for c in busy:
        with contextlib.suppress(ProcessLookupError):
            os.kill(c.process.pid, signal.SIGTERM)
    results = _collect(pool, busy, grace)
    with pool._lock:
        pending = list(pool._pending)
        pool._pending.clear()
    if not results and not pending:
        return
    with transaction(pool.engine) as conn:
        now = pool.clock()
        reached = apply_results(conn, [r for r, _ in results], now=now, views=pool.views,
                                actor=Actor.WORKER)
        if pending:
            door.set_task_instance_state(conn, [p.ti_id for p in pending], frm=TI.QUEUED,
                                         to=TI.SCHEDULED, actor=Actor.WORKER, now=now,
                                         message=HANDED_BACK)
    for r, on_done in results:
        state = reached.get(r.ti_id)
        notify(on_done, Done(r.ti_id, state.value if state is not None else "lost",
                              r.try_number))
    for p in pending:
        notify(p.on_done, Done(p.ti_id, "not_started"))


def _collect(pool: TaskProcessPool, busy: list[Child], grace: float) -> list[tuple[Any, Any]]:
    """Wait up to ``grace`` for each busy task process to report; kill the ones that do not."""
    deadline = time.monotonic() + grace
    results: list[tuple[Any, Any]] = []
    left = list(busy)
    while left:
        remaining = deadline - time.monotonic()
        ready = wait([x for c in left for x in (c.conn, c.process.sentinel)], max(0.0, remaining))
        if not ready and remaining <= 0:
            break
        for c in list(left):
            result = _report(pool, c)
            if result is not None:
                results.append((result, c.on_done))
                left.remove(c)
                pool._release(c)
    for c in left:
        with contextlib.suppress(ProcessLookupError):
            c.process.kill()
        c.process.join(1.0)
        results.append((_interrupted(c, f"it did not stop within the grace period of "
                                        f"{grace:g} s, so it was killed"), c.on_done))
        pool._release(c)
    return results


def _report(pool: TaskProcessPool, c: Child) -> TryResult | None:
    """What ``c`` reported, a result for a process that ended without a report, or None."""
    if c.conn.poll():
        try:
            message = c.conn.recv()
        except (EOFError, OSError):
            message = None
        if isinstance(message, TryResult):
            return message
        if message is not None:  # a question (cache, secret, state): answer and wait on
            pool._answer(c, message)
            return None
    if not c.process.is_alive():
        return _interrupted(c, "the task process ended without reporting")
    return None


def _interrupted(c: Child, why: str) -> TryResult:
    w = c.workload
    assert w is not None
    return TryResult.of(w, kind=INTERRUPTED, error=f"the worker is shutting down: {why}",
                        hostname=HOSTNAME, pid=c.process.pid)


__all__ = ["HANDED_BACK", "hand_back"]
