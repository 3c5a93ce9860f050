"""The triggerer: claims triggers, runs them in its event loop, writes their events.

One ``run_once``:

1. heartbeats its ``job`` row (every ``heartbeat_seconds``);
2. writes the events and failures its triggers produced (batched, one transaction each batch);
3. fails deferred task instances whose ``trigger_timeout`` passed;
4. now and then deletes triggers no deferred task instance waits on (cleared, removed tasks);
5. cancels the triggers it runs that are no longer its own (deleted, or taken over);
6. claims more — unassigned triggers and those of triggerers that stopped heartbeating — up to
   its capacity and at most ``max_claims_per_loop`` (``FOR UPDATE SKIP LOCKED`` on PostgreSQL),
   and starts them.

It wakes on its triggers' outcomes, on in-process transitions to ``deferred`` and on a timer.
On stop (SIGTERM) it cancels its triggers and releases them for other triggerers.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cryptography.fernet import MultiFernet
from sqlalchemy import Engine

from statewright.core.clock import Clock, utcnow
from statewright.crypto import FernetKeyError, decrypt_json
from statewright.db import transition as door
from statewright.db import wakeups
from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import jobs as job_repo
from statewright.db.repositories import triggers as trigger_repo
from statewright.services.loop_failures import LoopFailures
from statewright.services.triggerer import metrics
from statewright.services.triggerer.events import Failure, Fired, apply_events, apply_timeouts
from statewright.services.triggerer.events import clean_up as clean_up_triggers
from statewright.services.triggerer.loading import Loaded, load_triggers
from statewright.services.triggerer.runner import FIRED, Outcome, TriggerRunner
from statewright.services.triggerer.state_reader import make_state_reader
from statewright.services.triggerer.watchers import WatcherSupervisor

log = logging.getLogger("statewright.triggerer")
HOSTNAME = socket.gethostname()


@dataclass
class TriggererConfig:
    capacity: int = 1000
    heartbeat_seconds: float = 5.0
    health_threshold_seconds: float = 30.0
    """A triggerer that has not heartbeated for this long is dead; others take its triggers."""
    poll_seconds: float = 1.0
    max_claims_per_loop: int = 1000
    cleanup_every_seconds: float = 10.0
    lag_threshold_seconds: float = 1.0
    """The watchdog logs a trigger that holds the event loop for longer than this."""
    event_batch_size: int = 1000
    checks_every_seconds: float = 1.0
    """How often the timeouts and the ownership of the held triggers are checked: each check
    reads every deferred task instance or every held trigger, so not on every loop."""


_TIMEOUT_BATCH = 1000
_BURST_CHECKS = 5


@dataclass
class TriggererStats:
    claimed: int = 0
    fired: int = 0
    failed: int = 0
    timed_out: int = 0
    cancelled: int = 0
    orphans_deleted: int = 0

    @property
    def did_work(self) -> bool:
        return bool(self.claimed or self.fired or self.failed or self.timed_out
                    or self.cancelled or self.orphans_deleted)


class TriggererJob:
    def __init__(
        self,
        engine: Engine,
        *,
        cipher: MultiFernet,
        config: TriggererConfig | None = None,
        clock: Clock = utcnow,
        hostname: str = HOSTNAME,
    ) -> None:
        self.engine = engine
        self.cipher = cipher
        self.config = config or TriggererConfig()
        self.clock = clock
        self.hostname = hostname
        self.job_id: int | None = None
        self._wake = threading.Event()
        self.runner = TriggerRunner(on_outcome=self._wake.set,
                                    lag_threshold=self.config.lag_threshold_seconds)
        self.runner.on_blocked = lambda *_: metrics.BLOCKED.inc()
        self.watchers = WatcherSupervisor(engine, cipher=cipher, clock=clock,
                                          on_event=self._wake.set)
        self.state_reader = make_state_reader(engine)
        self._last_heartbeat = 0.0
        self._last_timeout_check: datetime | None = None
        self._last_ownership_check = float("-inf")
        self._last_claim_full = False
        self._last_cleanup = 0.0
        self._last_full = float("-inf")  # (the first pass of ``run_forever`` claims)
        self._at_capacity = False
        self._remove_listener: Callable[[], None] | None = None
        self._others: wakeups.WakeListener | None = None
        self._started = False
        # Set when there may be new triggers to claim (a deferral committed here, ``wake()``):
        # the loop then runs in full at once. Woken only by its triggers' events, it writes
        # them and leaves the claims, timeouts and ownership checks to their timer.
        self._claim_wake = threading.Event()

    # -- life cycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Check the key against the stored triggers, register the job, start the loop."""
        with self.engine.connect() as conn:
            token = trigger_repo.any_kwargs(conn)
        if token is not None:
            try:
                decrypt_json(self.cipher, token)
            except FernetKeyError as exc:
                raise FernetKeyError(
                    "The triggerer's Fernet key cannot decrypt the triggers stored in the "
                    f"database: {exc}") from None
        with transaction(self.engine) as conn:
            self.job_id = job_repo.register(
                conn, job_type=trigger_repo.TRIGGERER_JOB, hostname=self.hostname,
                pid=os.getpid(), capacity=self.config.capacity, now=self.clock())
        self._last_heartbeat = time.monotonic()
        metrics.HEARTBEAT_AGE.set_function(lambda: time.monotonic() - self._last_heartbeat)
        metrics.RUNNING.set_function(lambda: len(self.runner))
        self.runner.start()
        self.watchers.start(self.job_id)
        self._remove_listener = door.add_transition_listener(self._on_transitions)
        # Deferrals other processes commit (``db.wakeups``), not only on the poll.
        self._others = wakeups.WakeListener.start_for(self.engine.url, wakeups.TRIGGERER,
                                                      self.wake)
        self._started = True
        log.info("Triggerer %s started on %s (pid %s, capacity %s)", self.job_id,
                 self.hostname, os.getpid(), self.config.capacity)

    def stop(self) -> None:
        """Cancel the triggers, release them for other triggerers, mark the job stopped."""
        if not self._started:
            return
        self._started = False
        if self._remove_listener is not None:
            self._remove_listener()
            self._remove_listener = None
        if self._others is not None:
            self._others.stop()
            self._others = None
        self.runner.stop()
        self.watchers.stop()
        try:
            self._write_outcomes()
        except Exception:
            log.exception("could not write the last trigger events")
        with transaction(self.engine) as conn:
            released = trigger_repo.release(conn, self.job_id) if self.job_id else 0
            if self.job_id:
                job_repo.stop(conn, self.job_id, self.clock())
        log.info("Triggerer %s stopped; released %d triggers for other triggerers", self.job_id,
                 released)

    def run_forever(self, stop: threading.Event) -> None:
        if not self._started:
            self.start()
        failures = LoopFailures("triggerer loop", log, period=self.config.poll_seconds)
        try:
            while not stop.is_set():
                try:
                    self.step()
                except Exception as exc:
                    stop.wait(failures.failed(exc))
                    continue
                failures.succeeded()
                if self._claim_wake.is_set() or self.runner.has_outcomes():
                    continue
                self._wake.wait(self.config.poll_seconds)
                self._wake.clear()
        finally:
            self.stop()

    def step(self) -> TriggererStats:
        """One pass of ``run_forever``: ``run_once`` when woken for claims (a deferral, a
        full claim before: more are waiting), or ``poll_seconds`` after the last one; else
        only the events (``write_events``). A pass woken for claims (and not due by the timer)
        claims without first reading whether there is anything to claim, and leaves the asset
        watchers' claims (three reads) to the timer's passes: a stream of deferrals costs one
        claim transaction each pass."""
        mono = time.monotonic()
        timer_due = mono - self._last_full >= self.config.poll_seconds
        if not self._claim_wake.is_set() and not timer_due:
            return self.write_events()
        self._claim_wake.clear()
        if timer_due:
            self._last_full = mono
        stats = self.run_once(woken_for_claims=not timer_due)
        if stats.claimed >= self.config.max_claims_per_loop:
            # A burst (100,000 deferred at once, or a dead triggerer's triggers) is claimed
            # pass after pass, not one claim every ``poll_seconds``.
            self._claim_wake.set()
        return stats

    def wake(self) -> None:
        self._claim_wake.set()
        self._wake.set()

    def write_events(self) -> TriggererStats:
        """The part of ``run_once`` that a trigger's event needs: heartbeat when due, then write
        the events and failures of the triggers."""
        stats = TriggererStats()
        self._heartbeat_if_due()
        self._wake.clear()
        stats.fired, stats.failed = self._write_outcomes()
        stats.fired += self.watchers.write()
        return stats

    def _on_transitions(self, events: Sequence[door.TransitionEvent]) -> None:
        if any(e.to == "deferred" for e in events):
            self._claim_wake.set()
            self._wake.set()

    # -- one loop -----------------------------------------------------------------------------

    def run_once(self, *, woken_for_claims: bool = False) -> TriggererStats:
        assert self.job_id is not None, "start() the triggerer first"
        stats = TriggererStats()
        mono = time.monotonic()
        self._heartbeat_if_due()
        self._wake.clear()
        stats.fired, stats.failed = self._write_outcomes()
        timed_out = self._time_out()
        for r in timed_out:
            log.warning("Trigger %s of %s.%s (run %s, try %s) timed out; the task fails",
                        r.trigger_id, r.dag_id, r.task_id, r.run_id, r.try_number)
        stats.timed_out = len(timed_out)
        metrics.TIMED_OUT.inc(len(timed_out))
        if mono - self._last_cleanup >= self.config.cleanup_every_seconds:
            self._last_cleanup = mono
            stats.orphans_deleted = self._clean_up()
        if self._ownership_check_due(mono):
            self._last_ownership_check = mono
            stats.cancelled = self._cancel_lost()
        stats.claimed = self._claim(probe=not woken_for_claims)
        # Asset watchers: their events, and (three reads) their claims, left to the timer's
        # passes and waiting while claims of triggers come full (a burst of 100 passes would
        # read them 100 times).
        stats.fired += (self.watchers.write() if self._last_claim_full or woken_for_claims
                        else self.watchers.step())
        return stats

    def _ownership_check_due(self, mono: float) -> bool:
        """Every ``checks_every_seconds``; while claims come full (a burst: it reads every held
        trigger, 100,000 ids, each time), every ``_BURST_CHECKS`` of them. A trigger lost
        meanwhile only runs on: its event counts for its owner alone (``apply_events``)."""
        every = self.config.checks_every_seconds
        if self._last_claim_full:
            every *= _BURST_CHECKS
        return mono - self._last_ownership_check >= every

    def _time_out(self) -> list[Any]:
        """End the waits past their ``trigger_timeout`` (at most once a check interval, by the
        job's clock)."""
        now = self.clock()
        last = self._last_timeout_check
        if last is not None and (now - last).total_seconds() < self.config.checks_every_seconds:
            return []
        self._last_timeout_check = now
        with read_snapshot(self.engine) as conn:
            if not trigger_repo.timed_out(conn, now, 1):
                return []
        with transaction(self.engine) as conn:
            rows = list(apply_timeouts(conn, now=now, limit=_TIMEOUT_BATCH))
        if len(rows) >= _TIMEOUT_BATCH:  # there may be more: look again on the next loop
            self._last_timeout_check = None
        return rows

    def _heartbeat_if_due(self) -> None:
        """Heartbeat every ``heartbeat_seconds``: at the top of a loop and between the batches
        of a long write (100,000 events at once on a busy machine take minutes; a lease left
        to lapse meanwhile lets another triggerer take every trigger, and this one's events
        are then stale and dropped: the same triggers fired again, in a loop)."""
        if (self._started
                and time.monotonic() - self._last_heartbeat >= self.config.heartbeat_seconds):
            self._heartbeat()

    def _heartbeat(self) -> None:
        with transaction(self.engine) as conn:
            alive = job_repo.heartbeat(conn, self.job_id, self.clock())  # type: ignore[arg-type]
            if not alive:
                old = self.job_id
                self.job_id = job_repo.register(
                    conn, job_type=trigger_repo.TRIGGERER_JOB, hostname=self.hostname,
                    pid=os.getpid(), capacity=self.config.capacity, now=self.clock())
                log.warning("Triggerer job %s was marked stopped; continuing as job %s", old,
                            self.job_id)
        self._last_heartbeat = time.monotonic()

    def _write_outcomes(self) -> tuple[int, int]:
        fired_n = failed_n = 0
        while True:
            batch = self.runner.drain(self.config.event_batch_size)
            if not batch:
                return fired_n, failed_n
            # (The runner drops the outcome of a run that was cancelled or started again.)
            fired = [Fired(o.trigger_id, o.event.to_data(), o.end_from_trigger)
                     for o in batch if o.kind == FIRED]
            failures = [Failure(o.trigger_id, o.error or "trigger failed", o.traceback)
                        for o in batch if o.kind != FIRED]
            try:
                with transaction(self.engine) as conn:
                    applied = apply_events(conn, fired, failures, now=self.clock(),
                                           triggerer_id=self.job_id)
            except Exception:
                # Not written (the database out of reach): a trigger fires once, so its event
                # is kept for the next pass, not lost with its task waiting in deferred for
                # ever. Applying is a compare-and-set on ``deferred`` by the trigger's owner:
                # an event whose transaction committed after all is found stale then.
                self.runner.give_back(batch)
                raise
            self._log_outcomes(batch, applied.stale)
            self._heartbeat_if_due()
            fired_n += len(fired)
            failed_n += len(failures)
            metrics.FIRED.inc(len(fired))
            metrics.FAILED.inc(len(failures))

    def _log_outcomes(self, batch: Sequence[Outcome], stale: Sequence[int]) -> None:
        stale_set = set(stale)
        for o in batch:
            if o.trigger_id in stale_set:
                log.info("Trigger %s sent an event, but no task instance waits on it any more",
                         o.trigger_id)
            elif o.kind == FIRED:
                log.info("Trigger %s fired event: %r", o.trigger_id, o.event)
            else:
                log.error("Trigger %s failed with exception: %s\n%s", o.trigger_id, o.error,
                          o.traceback or "")

    def _clean_up(self) -> int:
        with transaction(self.engine) as conn:
            result = clean_up_triggers(conn)
        if result.deleted:
            log.info("Deleted %d orphaned triggers that no task instance waits on: %s",
                     len(result.deleted), ", ".join(f"{r.id} ({r.classpath})"
                                                   for r in result.deleted[:20]))
        return len(result.deleted)

    def _cancel_lost(self) -> int:
        running = self.runner.running_ids()
        if not running:
            return 0
        with self.engine.connect() as conn:
            mine = trigger_repo.assigned_to(conn, self.job_id)  # type: ignore[arg-type]
        lost = running - mine
        if lost:
            self.runner.cancel(lost)
            log.info("Cancelled %d triggers that are no longer this triggerer's (deleted, "
                     "cleared or taken over): %s", len(lost), sorted(lost)[:20])
        return len(lost)

    def _claim(self, *, probe: bool = True) -> int:
        free = self.config.capacity - len(self.runner)
        if free <= 0:
            if not self._at_capacity:
                log.warning("Triggerer at capacity (%s), not claiming new triggers",
                            self.config.capacity)
            self._at_capacity = True
            self._last_claim_full = False
            return 0
        self._at_capacity = False
        now = self.clock()
        cutoff = now - timedelta(seconds=self.config.health_threshold_seconds)
        # A read first, so that a pass with nothing to claim takes no write lock; not after a
        # full claim (there are likely more) nor when woken by a deferral.
        if probe and not self._last_claim_full:
            with read_snapshot(self.engine) as conn:
                if not trigger_repo.any_claimable(conn, heartbeat_after=cutoff):
                    return 0
        limit = min(free, self.config.max_claims_per_loop)
        with transaction(self.engine) as conn:
            rows = trigger_repo.claim(conn, self.job_id,  # type: ignore[arg-type]
                                      limit=limit, heartbeat_after=cutoff)
        self._last_claim_full = len(rows) >= limit
        if not rows:
            return 0
        taken_over = Counter(r.triggerer_id for r in rows if r.triggerer_id is not None)
        for dead, n in sorted(taken_over.items()):
            log.warning("Detected %d orphaned triggers from dead triggerer %s", n, dead)
        loaded = self.load(rows)
        _log_claimed(loaded.ok)
        self.runner.add(loaded.ok)
        if loaded.failures:
            with transaction(self.engine) as conn:
                apply_events(conn, [], loaded.failures, now=self.clock(),
                             triggerer_id=self.job_id)
            for f in loaded.failures:
                log.error("Trigger %s failed with exception: %s", f.trigger_id, f.error)
            metrics.FAILED.inc(len(loaded.failures))
        return len(rows)

    def load(self, rows: Sequence[Any]) -> Loaded:
        return load_triggers(rows, self.cipher, self.state_reader)


_CLAIM_LINES = 20
"""Up to this many triggers claimed in one pass get a line each; a bigger claim one line."""


def _log_claimed(claimed: Sequence[tuple[int, Any, str]]) -> None:
    if len(claimed) <= _CLAIM_LINES or log.isEnabledFor(logging.DEBUG):
        for trigger_id, _, classpath in claimed:
            log.info("Claimed trigger %s with classpath %s", trigger_id, classpath)
        return
    kinds = Counter(classpath.rsplit(".", 1)[-1] for _, _, classpath in claimed)
    ids = sorted(trigger_id for trigger_id, _, _ in claimed)
    log.info("Claimed %d triggers (%s), ids %s to %s", len(claimed),
             ", ".join(f"{n} {kind}" for kind, n in kinds.most_common()), ids[0], ids[-1])


def stop_on(signals: Sequence[int], stop: threading.Event) -> None:
    """Set ``stop`` on each of ``signals`` (SIGTERM, SIGINT) in the main thread."""
    import signal

    for sig in signals:
        signal.signal(sig, lambda *_: stop.set())
