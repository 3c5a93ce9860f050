"""The triggerer against SQLite and PostgreSQL: claims, events, failures, timeouts, clean-up,
capacity, take-over of a dead triggerer's triggers, release on stop, the Fernet key."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any

import pytest
from cryptography.fernet import MultiFernet
from sqlalchemy import Engine, select, update
from triggerer_helpers import defer, make_run, ti_row

from statewright.core.clock import utcnow
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.crypto import FernetKeyError, generate_key, load_fernet
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import jobs as job_repo
from statewright.db.repositories import transitions_log
from statewright.db.tables import job, trigger
from statewright.sdk.triggers import BaseTrigger, DateTimeTrigger, TimeDeltaTrigger, TriggerEvent
from statewright.sdk.triggers.base import classpath_of
from statewright.services.triggerer import TriggererConfig, TriggererJob


class RaisingTrigger(BaseTrigger):
    def serialize(self) -> tuple[str, dict[str, Any]]:
        return classpath_of(self), {}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        await asyncio.sleep(0)
        raise ValueError("the remote system said no")
        yield TriggerEvent(None)


class NeverTrigger(BaseTrigger):
    cleaned = 0

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return classpath_of(self), {}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        await asyncio.sleep(3600)
        yield TriggerEvent(None)

    async def cleanup(self) -> None:
        type(self).cleaned += 1


class BlockingTrigger(BaseTrigger):
    def serialize(self) -> tuple[str, dict[str, Any]]:
        return classpath_of(self), {}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        time.sleep(0.6)  # blocks the event loop: what the watchdog is for
        yield TriggerEvent("late")


class GoneTrigger(BaseTrigger):
    def serialize(self) -> tuple[str, dict[str, Any]]:
        return "statewright_no_such_module.triggers.GoneTrigger", {}

    async def run(self) -> AsyncIterator[TriggerEvent]:
        yield TriggerEvent(None)


def _soon() -> TimeDeltaTrigger:
    return TimeDeltaTrigger(timedelta(milliseconds=50))


@pytest.fixture
def triggerer(engine: Engine, cipher: MultiFernet) -> Iterator[TriggererJob]:
    job_ = TriggererJob(engine, cipher=cipher, config=TriggererConfig(
        heartbeat_seconds=0.2, health_threshold_seconds=2.0, lag_threshold_seconds=0.3,
        cleanup_every_seconds=0.0))
    job_.start()
    yield job_
    job_.stop()


def _run_until(job_: TriggererJob, done: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "timed out waiting"
        job_.run_once()
        time.sleep(0.02)


def _history(engine: Engine, pk: int) -> list[tuple[str | None, str, str]]:
    with engine.connect() as conn:
        return [(h.from_state, h.to_state, h.actor)
                for h in transitions_log.for_task_instance(conn, pk)]


def test_a_fired_trigger_resumes_the_task_once_with_its_event(
        engine: Engine, triggerer: TriggererJob) -> None:
    ids = make_run(engine, 3)
    defer(engine, list(ids.values()), _soon, kwargs={"x": 1})
    with engine.connect() as conn:
        rows = conn.execute(select(trigger)).all()
    assert len(rows) == 3 and all(r.kwargs.startswith("gAAAA") for r in rows)
    assert all("moment" not in r.kwargs for r in rows)  # encrypted, no plaintext
    _run_until(triggerer, lambda: all(ti_row(engine, pk).state == "scheduled"
                                      for pk in ids.values()))
    for pk in ids.values():
        row = ti_row(engine, pk)
        assert row.trigger_id is None and row.next_method == "done" and row.try_number == 1
        assert row.next_kwargs["x"] == 1 and "event" in row.next_kwargs
        hist = _history(engine, pk)
        assert hist[-2:] == [("running", "deferred", "worker"),
                             ("deferred", "scheduled", "triggerer")]
    with engine.connect() as conn:
        assert conn.execute(select(trigger)).all() == []
    for _ in range(3):  # nothing more happens
        triggerer.run_once()
    assert all(_history(engine, pk)[-1][1] == "scheduled" for pk in ids.values())


def test_a_trigger_that_raises_fails_the_task_through_fail(
        engine: Engine, triggerer: TriggererJob, caplog: pytest.LogCaptureFixture) -> None:
    (pk,) = make_run(engine).values()
    defer(engine, [pk], RaisingTrigger)
    with caplog.at_level(logging.INFO, "statewright.triggerer"):
        _run_until(triggerer, lambda: ti_row(engine, pk).state == "scheduled")
    row = ti_row(engine, pk)
    assert row.next_method == "__fail__"
    assert "ValueError: the remote system said no" in row.next_kwargs["error"]
    assert "Traceback" in row.next_kwargs["traceback"]
    assert row.next_kwargs["reason"] == "trigger_failure"
    assert any("failed with exception" in r.message for r in caplog.records)
    assert any("Claimed trigger" in r.message for r in caplog.records)


def test_a_trigger_class_that_no_longer_imports_fails_the_task(
        engine: Engine, triggerer: TriggererJob) -> None:
    (pk,) = make_run(engine).values()
    defer(engine, [pk], GoneTrigger)
    _run_until(triggerer, lambda: ti_row(engine, pk).state == "scheduled")
    row = ti_row(engine, pk)
    assert row.next_method == "__fail__"
    assert "statewright_no_such_module.triggers.GoneTrigger" in row.next_kwargs["error"]
    assert "cannot be imported" in row.next_kwargs["error"]


def test_a_trigger_that_never_fires_times_out(
        engine: Engine, triggerer: TriggererJob) -> None:
    (pk,) = make_run(engine).values()
    defer(engine, [pk], NeverTrigger, timeout=timedelta(milliseconds=300))
    assert ti_row(engine, pk).trigger_timeout is not None
    before = NeverTrigger.cleaned
    _run_until(triggerer, lambda: ti_row(engine, pk).state == "scheduled")
    row = ti_row(engine, pk)
    assert row.next_method == "__fail__" and row.next_kwargs["reason"] == "timeout"
    assert row.trigger_id is None
    _run_until(triggerer, lambda: NeverTrigger.cleaned > before)  # cancelled, cleaned up
    assert len(triggerer.runner) == 0


def test_clearing_a_deferred_task_leaves_nothing_behind(
        engine: Engine, triggerer: TriggererJob, caplog: pytest.LogCaptureFixture) -> None:
    (pk,) = make_run(engine).values()
    defer(engine, [pk], NeverTrigger)
    _run_until(triggerer, lambda: len(triggerer.runner) == 1)
    with transaction(engine) as conn:  # what a user's clear does
        door.set_task_instance_state(conn, pk, frm=TI.DEFERRED, to=TI.NONE, actor=Actor.USER,
                                     now=utcnow())
    with caplog.at_level(logging.INFO, "statewright.triggerer"):
        _run_until(triggerer, lambda: len(triggerer.runner) == 0)
    row = ti_row(engine, pk)
    assert (row.state, row.trigger_id, row.next_method) == ("none", None, None)
    with engine.connect() as conn:
        assert conn.execute(select(trigger)).all() == []
    assert any("orphaned" in r.message for r in caplog.records)


def test_the_watchdog_names_a_trigger_that_blocks_the_loop(
        engine: Engine, triggerer: TriggererJob, caplog: pytest.LogCaptureFixture) -> None:
    (pk,) = make_run(engine).values()
    defer(engine, [pk], BlockingTrigger)
    with caplog.at_level(logging.WARNING, "statewright.triggerer"):
        _run_until(triggerer, lambda: ti_row(engine, pk).state == "scheduled")
    trigger_ids = [b[0] for b in triggerer.runner.blocked]
    assert trigger_ids and trigger_ids[0] is not None
    assert triggerer.runner.blocked[0][1].endswith("BlockingTrigger")
    assert any("blocked" in r.message and "BlockingTrigger" in r.message
               for r in caplog.records)


def test_capacity_limits_claims(engine: Engine, cipher: MultiFernet,
                                caplog: pytest.LogCaptureFixture) -> None:
    ids = list(make_run(engine, 5).values())
    defer(engine, ids, NeverTrigger)
    job_ = TriggererJob(engine, cipher=cipher, config=TriggererConfig(capacity=2))
    job_.start()
    try:
        with caplog.at_level(logging.WARNING, "statewright.triggerer"):
            job_.run_once()
            job_.run_once()
        assert len(job_.runner) == 2
        assert any("at capacity (2)" in r.message for r in caplog.records)
    finally:
        job_.stop()
    with engine.connect() as conn:  # released on stop
        assert {r.triggerer_id for r in conn.execute(select(trigger)).all()} == {None}


def test_a_dead_triggerers_triggers_are_taken_over(
        engine: Engine, cipher: MultiFernet, caplog: pytest.LogCaptureFixture) -> None:
    ids = list(make_run(engine, 3).values())
    defer(engine, ids, NeverTrigger)
    # checks_every_seconds=0: the first notices its triggers are gone on its very next loop.
    # One fixed moment for both jobs' heartbeats and lease checks: however slow the machine,
    # the first looks alive until its heartbeat is moved back.
    config = TriggererConfig(health_threshold_seconds=1.0, cleanup_every_seconds=0.0,
                             checks_every_seconds=0.0)
    now = utcnow()
    first = TriggererJob(engine, cipher=cipher, config=config, clock=lambda: now)
    first.start()
    first.run_once()
    assert len(first.runner) == 3
    second = TriggererJob(engine, cipher=cipher, config=config, clock=lambda: now)
    second.start()
    try:
        second.run_once()
        assert len(second.runner) == 0  # first is alive: nothing to take
        with transaction(engine) as conn:  # first stops heartbeating
            conn.execute(update(job).where(job.c.id == first.job_id)
                         .values(latest_heartbeat=now - timedelta(seconds=5)))
        with caplog.at_level(logging.WARNING, "statewright.triggerer"):
            second.run_once()
        assert len(second.runner) == 3
        assert any(f"orphaned triggers from dead triggerer {first.job_id}" in r.message
                   for r in caplog.records)
        first._last_heartbeat = time.monotonic()  # keep it from heartbeating back in
        first.run_once()  # it notices its triggers are gone and cancels them
        assert len(first.runner) == 0
    finally:
        first.stop()
        second.stop()


def test_a_wrong_key_is_an_error_at_start_and_nothing_is_claimed(
        engine: Engine, cipher: MultiFernet) -> None:
    (pk,) = make_run(engine).values()
    defer(engine, [pk], _soon)
    other = TriggererJob(engine, cipher=load_fernet(generate_key()))
    with pytest.raises(FernetKeyError, match="cannot decrypt the triggers stored"):
        other.start()
    with engine.connect() as conn:
        assert job_repo.list_jobs(conn, "triggerer") == []
    assert ti_row(engine, pk).state == "deferred"


def test_end_from_trigger_finishes_the_task_in_the_triggerer(
        engine: Engine, triggerer: TriggererJob) -> None:
    (pk,) = make_run(engine).values()
    defer(engine, [pk], lambda: DateTimeTrigger(utcnow(), end_from_trigger=True))
    _run_until(triggerer, lambda: ti_row(engine, pk).state == "success")
    assert _history(engine, pk)[-1] == ("deferred", "success", "triggerer")


def test_events_of_a_trigger_taken_over_are_ignored(engine: Engine, cipher: MultiFernet) -> None:
    from statewright.services.triggerer.events import Fired, apply_events

    (pk,) = make_run(engine).values()
    defer(engine, [pk], _soon)
    with engine.connect() as conn:
        (tid,) = [r.id for r in conn.execute(select(trigger.c.id)).all()]
    with transaction(engine) as conn:
        jid = job_repo.register(conn, job_type="triggerer", hostname="h", pid=1, capacity=1,
                                now=utcnow())
        res = apply_events(conn, [Fired(tid, "x")], [], now=utcnow(), triggerer_id=jid)
    assert res.stale == [tid] and ti_row(engine, pk).state == "deferred"


def test_a_big_claim_is_logged_in_one_line(
        engine: Engine, triggerer: TriggererJob, caplog: pytest.LogCaptureFixture) -> None:
    """A pass claiming more than 20 triggers logs one line (count, classes, id range), not one
    per trigger; at DEBUG each trigger still gets its line."""
    pks = list(make_run(engine, n_tasks=25).values())
    defer(engine, pks, lambda: TimeDeltaTrigger(timedelta(hours=1)))
    with caplog.at_level(logging.INFO, "statewright.triggerer"):
        _run_until(triggerer, lambda: len(triggerer.runner) == 25)
    claimed = [r.message for r in caplog.records if r.message.startswith("Claimed")]
    assert len(claimed) == 1, claimed
    assert claimed[0].startswith("Claimed 25 triggers (25 ") and " ids " in claimed[0]


def test_an_event_the_database_did_not_take_is_written_on_the_next_pass(
        engine: Engine, triggerer: TriggererJob, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trigger fires once: when writing its event fails (the database restarting), the event
    is kept and written by a later pass, so its task does not wait in deferred for ever."""
    from statewright.services.triggerer import job as job_module

    ids = make_run(engine, 2)
    defer(engine, list(ids.values()), _soon)
    real = job_module.apply_events
    failures: list[int] = []

    def down_once(*args: Any, **kwargs: Any) -> Any:
        if not failures:
            failures.append(1)
            raise ConnectionError("the database restarts")
        return real(*args, **kwargs)

    monkeypatch.setattr(job_module, "apply_events", down_once)
    deadline, raised = time.monotonic() + 10, 0
    while not failures:  # the triggers fire; writing their events fails once
        assert time.monotonic() < deadline, "the triggers never fired"
        try:
            triggerer.run_once()
        except ConnectionError:
            raised += 1
        time.sleep(0.02)
    assert raised == 1
    assert all(ti_row(engine, pk).state == "deferred" for pk in ids.values())
    _run_until(triggerer, lambda: all(ti_row(engine, pk).state == "scheduled"
                                      for pk in ids.values()))
    for pk in ids.values():
        assert _history(engine, pk)[-1] == ("deferred", "scheduled", "triggerer")



def test_a_burst_is_claimed_pass_after_pass_not_one_claim_a_poll(
        engine: Engine, cipher: MultiFernet) -> None:
    ids = list(make_run(engine, 5).values())
    defer(engine, ids, NeverTrigger)
    job_ = TriggererJob(engine, cipher=cipher, config=TriggererConfig(
        poll_seconds=3600, max_claims_per_loop=2))
    job_.start()
    try:
        # The first pass claims (however long the host has been up); a full claim makes the
        # next pass claim again; the pass after a claim that was not full only writes events.
        assert [job_.step().claimed for _ in range(4)] == [2, 2, 1, 0]
        assert len(job_.runner) == 5
    finally:
        job_.stop()


def test_asset_watchers_are_claimed_after_a_burst_of_claims_not_on_each_of_its_passes(
        engine: Engine, cipher: MultiFernet, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = list(make_run(engine, 5).values())
    defer(engine, ids, NeverTrigger)
    job_ = TriggererJob(engine, cipher=cipher, config=TriggererConfig(max_claims_per_loop=2))
    job_.start()
    calls: list[str] = []
    monkeypatch.setattr(job_.watchers, "step", lambda: calls.append("step") or 0)
    monkeypatch.setattr(job_.watchers, "write", lambda: calls.append("write") or 0)
    try:
        claimed = [job_.run_once().claimed for _ in range(4)]
    finally:
        monkeypatch.undo()
        job_.stop()
    assert claimed == [2, 2, 1, 0]
    # Events are written on every pass; claims of watchers wait while claims come full.
    assert calls == ["write", "write", "step", "step"]


def test_a_pass_woken_by_a_deferral_claims_without_reading_first_what_there_is(
        engine: Engine, cipher: MultiFernet, monkeypatch: pytest.MonkeyPatch) -> None:
    from statewright.db.repositories import triggers as trigger_repo

    ids = list(make_run(engine, 1).values())
    job_ = TriggererJob(engine, cipher=cipher, config=TriggererConfig(poll_seconds=3600))
    job_.start()
    probes: list[str] = []
    calls: list[str] = []
    any_claimable = trigger_repo.any_claimable
    monkeypatch.setattr(trigger_repo, "any_claimable",
                        lambda *a, **k: probes.append("probe") or any_claimable(*a, **k))
    monkeypatch.setattr(job_.watchers, "step", lambda: calls.append("step") or 0)
    monkeypatch.setattr(job_.watchers, "write", lambda: calls.append("write") or 0)
    try:
        assert job_.step().claimed == 0  # the timer's first pass: read, nothing to claim
        assert (probes, calls) == (["probe"], ["step"])
        defer(engine, ids, NeverTrigger)  # committed in this process: wakes for claims
        assert job_.step().claimed == 1
        assert (probes, calls) == (["probe"], ["step", "write"])
        assert job_.step().claimed == 0  # not woken, the timer not due: events only
        assert (probes, calls[1:]) == (["probe"], ["write", "write"])
    finally:
        monkeypatch.undo()
        job_.stop()
