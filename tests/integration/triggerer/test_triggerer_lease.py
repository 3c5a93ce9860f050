"""The triggerer keeps its lease (its job's heartbeat) while a long write of events runs: on a
busy machine 100,000 events due together take minutes to write, and a lease let lapse meanwhile
hands every trigger to another triggerer, which fires them again while this one's events are
dropped as stale."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

from cryptography.fernet import MultiFernet
from sqlalchemy import Engine
from triggerer_helpers import defer, make_run, ti_row

from statewright.core.clock import utcnow
from statewright.db.repositories import jobs as job_repo
from statewright.db.repositories import triggers as trigger_repo
from statewright.sdk.triggers import BaseTrigger, TriggerEvent
from statewright.sdk.triggers.base import classpath_of
from statewright.services.triggerer import TriggererConfig, TriggererJob

_OPEN = threading.Event()


class GateTrigger(BaseTrigger):
    """Fires once the test opens the gate (an event, not a moment)."""

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return classpath_of(self), {}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        await asyncio.to_thread(_OPEN.wait, 60)
        yield TriggerEvent("open")


class SteppingClock:
    """The job's clock: still until ``step`` is set, then ``step`` later at every reading (each
    database write of the triggerer reads it: a slow machine, without waiting for one)."""

    def __init__(self) -> None:
        self.now = utcnow()
        self.step = timedelta(0)

    def __call__(self) -> datetime:
        self.now += self.step
        return self.now


def test_a_long_write_of_events_renews_the_lease(engine: Engine, cipher: MultiFernet) -> None:
    _OPEN.clear()
    clock = SteppingClock()
    job_ = TriggererJob(engine, cipher=cipher, clock=clock, config=TriggererConfig(
        heartbeat_seconds=0.0, health_threshold_seconds=30.0, event_batch_size=1,
        cleanup_every_seconds=3600.0))
    job_.start()
    try:
        pks = list(make_run(engine, 4).values())
        defer(engine, pks, GateTrigger)
        job_.run_once()
        assert len(job_.runner) == 4
        _OPEN.set()
        deadline = time.monotonic() + 60
        while len(job_.runner):  # every trigger fired: the four events wait to be written
            assert time.monotonic() < deadline, "the triggers did not fire"
            job_._wake.wait(1.0)
            job_._wake.clear()
        clock.step = timedelta(seconds=20)  # each of the 4 batches: 20 s or more of the clock
        assert job_.write_events().fired == 4
        with engine.connect() as conn:
            alive = job_repo.alive_ids(conn, trigger_repo.TRIGGERER_JOB,
                                       heartbeat_after=clock.now - timedelta(seconds=30))
        assert job_.job_id in alive, "the lease lapsed during the write"
        assert all(ti_row(engine, pk).state == "scheduled" for pk in pks)
    finally:
        _OPEN.set()
        job_.stop()
