"""Asset watchers in the triggerer: each watcher's trigger runs continuously, and every event it
yields becomes an event of the watched asset.

A watcher is claimed by one live triggerer (``FOR UPDATE SKIP LOCKED`` on PostgreSQL; the
watchers of a triggerer that stopped heartbeating are taken over). Its trigger runs in an
asyncio loop on a thread of its own: when ``run()`` ends after an event, the trigger is built
again and re-armed; when it raises (or cannot even be built), the failure is recorded on the
watcher row (``failures``, ``last_error``, ``next_attempt_at``) and it is re-armed after an
exponential back-off — a watcher is never dropped and never spins. A ``run()`` that ends
without an event waits ``idle_seconds`` before the next arm. The events are written in batches
(one transaction per batch), queued for the DAGs scheduled on the asset like any other event.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cryptography.fernet import MultiFernet
from sqlalchemy import Engine

from statewright.core.clock import Clock, utcnow
from statewright.crypto import decrypt_json
from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import asset_watchers as watcher_repo
from statewright.db.repositories import jobs as job_repo
from statewright.db.repositories.asset_events import NewAssetEvent, record
from statewright.sdk import serde
from statewright.sdk.triggers.base import import_trigger
from statewright.sdk.triggers.watchers import raise_if_cancelled

log = logging.getLogger("statewright.triggerer.watchers")
TRIGGERER_JOB = "triggerer"


@dataclass
class WatcherConfig:
    backoff_seconds: float = 1.0
    backoff_max_seconds: float = 300.0
    idle_seconds: float = 1.0
    batch_size: int = 5000
    health_threshold_seconds: float = 30.0


def backoff(failures: int, config: WatcherConfig) -> float:
    """Seconds to wait after the ``failures``-th failure in a row (1, 2, 4, … up to the max)."""
    return float(min(config.backoff_seconds * 2 ** max(failures - 1, 0),
                     config.backoff_max_seconds))


@dataclass(frozen=True)
class _Item:
    watcher_id: int
    payload: Any = None
    error: str | None = None
    failures: int = 0


async def _cancel_all() -> None:
    """Cancel every watcher of this loop and wait until each has cleaned up.

    A client that turns a cancellation into a read timeout (``asyncio.timeout`` on Python 3.11
    can) swallows it: the still running ones are cancelled again, for up to ten seconds."""
    me = asyncio.current_task()
    pending = {t for t in asyncio.all_tasks() if t is not me}
    for _ in range(50):
        if not pending:
            return
        for t in pending:
            t.cancel()
        _, pending = await asyncio.wait(pending, timeout=0.2)
    log.error("%d asset watcher(s) did not stop when cancelled", len(pending))


class WatcherSupervisor:
    """Runs this triggerer's asset watchers; ``step()`` claims, stops and writes."""

    def __init__(self, engine: Engine, *, cipher: MultiFernet, clock: Clock = utcnow,
                 config: WatcherConfig | None = None,
                 on_event: Callable[[], None] | None = None) -> None:
        self.engine = engine
        self.cipher = cipher
        self.clock = clock
        self.config = config or WatcherConfig()
        self.on_event = on_event
        self.job_id: int | None = None
        self._outbox: deque[_Item] = deque()
        self._running: dict[int, tuple[datetime, asyncio.Future[Any]]] = {}
        self._rows: dict[int, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle -------------------------------------------------------------------------

    def start(self, job_id: int) -> None:
        self.job_id = job_id
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="asset-watchers",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._loop is None:
            return
        self._running.clear()
        try:
            asyncio.run_coroutine_threadsafe(_cancel_all(), self._loop).result(10)
        except Exception:
            log.exception("stopping the asset watchers failed")
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        try:  # async generators and clients left over finish in their own loop
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        finally:
            self._loop.close()
        self.write()
        if self.job_id is not None:
            with transaction(self.engine) as conn:
                watcher_repo.release(conn, self.job_id)
        self._loop = None

    def __len__(self) -> int:
        return len(self._running)

    # -- one step -----------------------------------------------------------------------------

    def step(self) -> int:
        """Write what the watchers produced; stop the ones no longer this triggerer's; claim
        and start the free ones. Returns how many events were written."""
        if self._loop is None or self.job_id is None:
            return 0
        written = self.write()
        now = self.clock()
        cutoff = now - timedelta(seconds=self.config.health_threshold_seconds)
        with read_snapshot(self.engine) as conn:
            alive = job_repo.alive_ids(conn, TRIGGERER_JOB, cutoff) | {self.job_id}
            claimable = watcher_repo.any_claimable(conn, alive)
            mine = {r.id: r for r in watcher_repo.mine(conn, self.job_id)}
        if claimable:
            with transaction(self.engine) as conn:
                watcher_repo.claim(conn, self.job_id, alive, limit=1000)
                mine = {r.id: r for r in watcher_repo.mine(conn, self.job_id)}
        for wid in [w for w in self._running if w not in mine
                    or mine[w].updated_at != self._running[w][0]]:
            self._running.pop(wid)[1].cancel()
        for wid, row in mine.items():
            if wid not in self._running:
                self._rows[wid] = row
                fut = asyncio.run_coroutine_threadsafe(self._watch(row), self._loop)
                self._running[wid] = (row.updated_at, fut)
                log.info("watching asset %s with %s (%s)", row.asset_name, row.name,
                         row.classpath)
        return written

    def write(self) -> int:
        """Write queued events and failures in batches; returns how many events."""
        total = 0
        while self._outbox:
            batch = [self._outbox.popleft()
                     for _ in range(min(len(self._outbox), self.config.batch_size))]
            now = self.clock()
            events = [i for i in batch if i.error is None]
            counts: dict[int, int] = {}
            for i in events:
                counts[i.watcher_id] = counts.get(i.watcher_id, 0) + 1
            try:
                with transaction(self.engine) as conn:
                    record(conn, [self._event(i) for i in events if i.watcher_id in self._rows],
                           now)
                    watcher_repo.record_events(conn, counts, now)
                    for i in batch:
                        if i.error is not None:
                            retry = now + timedelta(seconds=backoff(i.failures, self.config))
                            watcher_repo.record_failure(conn, i.watcher_id, i.error, retry, now)
            except Exception:
                # Not written (the database out of reach): kept for the next pass, in order.
                # A message the watcher took from its source is not lost.
                self._outbox.extendleft(reversed(batch))
                raise
            total += len(events)
        return total

    def _event(self, item: _Item) -> NewAssetEvent:
        row = self._rows[item.watcher_id]
        return NewAssetEvent(
            asset={"name": row.asset_name, "uri": row.asset_uri, "group": row.asset_group},
            source="watcher", extra={"from_trigger": True, "watcher": row.name,
                                     "payload": item.payload})

    def _put(self, item: _Item) -> None:
        self._outbox.append(item)
        if self.on_event is not None:
            self.on_event()

    # -- the asyncio side -----------------------------------------------------------------------

    async def _watch(self, row: Any) -> None:
        failures = 0
        while True:
            fired = 0
            try:
                kwargs = serde.deserialize(decrypt_json(self.cipher, row.kwargs),
                                           path=f"kwargs of watcher {row.name}")
                trigger = import_trigger(row.classpath, kwargs)
                events = trigger.run()
                try:
                    async for event in events:
                        self._put(_Item(row.id, payload=event.to_data()))
                        fired += 1
                        failures = 0
                        raise_if_cancelled()
                finally:  # closed here, in this loop, whatever ended it (cancel included)
                    await events.aclose()
                    await trigger.cleanup()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures += 1
                error = f"{type(exc).__name__}: {exc}"
                log.error("watcher %s of asset %s failed (%d in a row); re-armed in %.0fs: %s",
                          row.name, row.asset_name, failures, backoff(failures, self.config),
                          "".join(traceback.format_exception(exc)))
                self._put(_Item(row.id, error=error, failures=failures))
                await asyncio.sleep(backoff(failures, self.config))
                continue
            if not fired:
                await asyncio.sleep(self.config.idle_seconds)
