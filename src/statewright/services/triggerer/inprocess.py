"""Triggers for ``dag.test()``: run in this thread, with asyncio, when the run has nothing else
to do, until one of them fires (or fails, or a deferral times out, or ``max_wait`` passes)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from cryptography.fernet import MultiFernet
from sqlalchemy import Engine, select

from statewright.core.clock import Clock
from statewright.core.states import TI
from statewright.db.engine import transaction
from statewright.db.repositories import triggers as trigger_repo
from statewright.db.tables import task_instance
from statewright.services.triggerer.events import Failure, Fired, apply_events, apply_timeouts
from statewright.services.triggerer.loading import load_triggers
from statewright.services.triggerer.runner import FIRED, run_to_first_event
from statewright.services.triggerer.state_reader import make_state_reader


def run_deferred_triggers(
    engine: Engine,
    dag_run_id: int,
    *,
    clock: Clock,
    cipher: MultiFernet | None = None,
    max_wait: float | None,
) -> bool | None:
    """Run the triggers the run's deferred task instances wait on. Returns None when none
    waits, else True once an event, a failure or a timeout was written, or ``max_wait``
    seconds passed (False: nothing happened within it)."""
    c = task_instance.c
    with engine.connect() as conn:
        waiting = conn.execute(
            select(c.id, c.trigger_id, c.trigger_timeout)
            .where(c.dag_run_id == dag_run_id, c.state == TI.DEFERRED.value)
        ).all()
        rows = trigger_repo.get_many(conn, [w.trigger_id for w in waiting if w.trigger_id])
    if not waiting:
        return None
    now = clock()
    timeouts = [w.trigger_timeout for w in waiting if w.trigger_timeout is not None]
    wait = max_wait
    if timeouts:
        until_timeout = max(0.0, (min(timeouts) - now).total_seconds()) + 0.001
        wait = until_timeout if wait is None else min(wait, until_timeout)
    if cipher is None:
        from statewright.services.worker.deferral import current_cipher

        cipher = current_cipher()
    loaded = load_triggers(rows, cipher, make_state_reader(engine))
    fired: list[Fired] = []
    failures = list(loaded.failures)
    if loaded.ok and not failures:
        fired, failures = asyncio.run(_first_outcomes(loaded.ok, wait))
    elif not loaded.ok and not failures and wait:
        time.sleep(wait)
    with transaction(engine) as conn:
        applied = apply_events(conn, fired, failures, now=clock())
        timed_out = apply_timeouts(conn, now=clock() + timedelta(microseconds=1))
    return bool(applied.resumed or applied.failed or applied.succeeded or timed_out
                or (max_wait is not None and wait == max_wait))


async def _first_outcomes(
    triggers: Sequence[tuple[int, Any, str]], wait: float | None
) -> tuple[list[Fired], list[Failure]]:
    tasks = {asyncio.ensure_future(run_to_first_event(trig)): tid for tid, trig, _ in triggers}
    ends = {tid: bool(getattr(trig, "end_from_trigger", False)) for tid, trig, _ in triggers}
    done, pending = await asyncio.wait(tasks, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    fired: list[Fired] = []
    failures: list[Failure] = []
    for task in done:
        kind, value, tb = task.result()
        if kind == FIRED:
            fired.append(Fired(tasks[task], value.to_data(), ends[tasks[task]]))
        else:
            failures.append(Failure(tasks[task], value, tb))
    return fired, failures
