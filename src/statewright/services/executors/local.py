"""The local executor: a pool of task processes supervised by one thread.

The supervisor (this module, in the scheduler's process or in ``statewright worker``) holds the
database session; the task processes hold none. For each batch of queued task instances it
starts the tries (queued → running, one transaction), sends each workload down a pipe to an idle
task process, and applies the outcomes in batches. A task process that dies (segfault,
``os._exit``, OOM kill) is replaced; its try ends ``Crashed``. A try past its
``execution_timeout`` is killed and ends ``TimedOut``. The supervisor heartbeats its running
tries, and kills a try whose task instance is no longer running its try (marked, cleared,
cancelled elsewhere).
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select, tuple_

from statewright.core.clock import Clock, utcnow
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.tables import task_instance
from statewright.services.controls.stopped import settle_stopped_tries
from statewright.services.dag_view import DagViewCache
from statewright.services.worker.caching import CacheLookup
from statewright.services.worker.callbacks import TryStateQuery
from statewright.services.worker.callbacks import answer as answer_request
from statewright.services.worker.dag_callbacks import DagCallbackRunner
from statewright.services.worker.outcome import CRASHED, TIMED_OUT, TryResult, apply_results
from statewright.services.worker.task_runner import HOSTNAME, child_main
from statewright.services.worker.workload import Workload, start_tries

log = logging.getLogger("statewright.executor.local")


@dataclass
class _Child:
    process: Any
    conn: Connection
    workload: Workload | None = None
    started_at: float = 0.0
    deadline: float | None = None
    kill_reason: str | None = None

    @property
    def idle(self) -> bool:
        return self.workload is None


class LocalExecutor:
    def __init__(
        self,
        engine: Engine,
        *,
        parallelism: int = 4,
        logs_folder: Path | None = None,
        clock: Clock = utcnow,
        heartbeat_seconds: float = 5.0,
        views: DagViewCache | None = None,
        queue_depth: int | None = None,
    ) -> None:
        self.engine = engine
        self.parallelism = max(1, parallelism)
        self.logs_folder = logs_folder
        self.clock = clock
        self.heartbeat_seconds = heartbeat_seconds
        self.views = views or DagViewCache()
        self.queue_depth = queue_depth if queue_depth is not None else 4 * self.parallelism
        self._ctx = mp.get_context("forkserver")
        self._pending: deque[int] = deque()
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = self._ctx.Pipe(duplex=False)
        self._children: list[_Child] = []
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._last_heartbeat = 0.0
        self.crashed_tries = 0
        self.identity = f"local:{HOSTNAME}:{os.getpid()}"
        # Controls (clear, mark, cancel): check running tries at once when one leaves running
        # in this process, and settle the tries killed for it.
        self._check_now = threading.Event()
        self._stopped: list[tuple[int, int]] = []
        self._remove_listener: Any = None
        self._dag_callbacks: Any = None

    # -- executor interface --------------------------------------------------------------------

    def slots_available(self) -> int:
        with self._lock:
            pending = len(self._pending)
        busy = sum(1 for c in self._children if not c.idle)
        return max(0, self.parallelism + self.queue_depth - busy - pending)

    def queue_workloads(self, ti_ids: Sequence[int]) -> None:
        with self._lock:
            self._pending.extend(ti_ids)
        self._poke()

    def start(self) -> None:
        self._ctx.set_forkserver_preload(["statewright.services.worker.task_runner"])
        for _ in range(self.parallelism):
            self._children.append(self._spawn())
        self._thread = threading.Thread(target=self._loop, name="local-executor", daemon=True)
        self._thread.start()
        self._remove_listener = door.add_transition_listener(self._on_transitions)
        self._dag_callbacks = DagCallbackRunner(self.engine, clock=self.clock,
                                                context=self._ctx).start()

    def stop(self, timeout: float = 10.0) -> None:
        if self._remove_listener is not None:
            self._remove_listener()
        if self._dag_callbacks is not None:
            self._dag_callbacks.stop(timeout)
        self._stop.set()
        self._poke()
        if self._thread:
            self._thread.join(timeout)
        for c in self._children:
            try:
                c.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        for c in self._children:
            c.process.join(1.0)
            if c.process.is_alive():
                c.process.kill()
                c.process.join(1.0)
        self._children.clear()

    # -- internals ---------------------------------------------------------------------------

    def _poke(self) -> None:
        try:
            self._wake_w.send_bytes(b"x")
        except (OSError, BrokenPipeError):
            pass

    def _spawn(self) -> _Child:
        parent, child = self._ctx.Pipe()
        p = self._ctx.Process(target=child_main, args=(child,), daemon=True,
                              name="statewright-task")
        p.start()
        child.close()
        return _Child(process=p, conn=parent)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._step()
            except Exception:
                log.exception("local executor step failed")
                time.sleep(0.5)

    def _step(self) -> None:
        busy = [c for c in self._children if not c.idle]
        waitables: list[Any] = [self._wake_r]
        for c in busy:
            waitables += [c.conn, c.process.sentinel]
        ready = wait(waitables, self._next_timeout(busy)) if busy or not self._has_work() else []
        if self._wake_r in ready:
            while self._wake_r.poll():
                self._wake_r.recv_bytes()
        results: list[TryResult] = []
        now_mono = time.monotonic()
        for c in busy:
            result = self._collect(c, now_mono)
            if result is not None:
                results.append(result)
        # One transaction applies the finished tries and starts the next ones.
        self._apply_and_dispatch(results)
        if now_mono - self._last_heartbeat >= self.heartbeat_seconds or self._check_now.is_set():
            self._check_now.clear()
            self._last_heartbeat = now_mono
            self._heartbeat()

    def _has_work(self) -> bool:
        with self._lock:
            return bool(self._pending) and any(c.idle for c in self._children)

    def _next_timeout(self, busy: list[_Child]) -> float:
        t = self.heartbeat_seconds
        now = time.monotonic()
        for c in busy:
            if c.deadline is not None:
                t = min(t, max(0.0, c.deadline - now))
        return t

    def _collect(self, c: _Child, now_mono: float) -> TryResult | None:
        w = c.workload
        assert w is not None
        if c.conn.poll():
            try:
                result: TryResult = c.conn.recv()
            except (EOFError, OSError):
                result = None  # type: ignore[assignment]
            if isinstance(result, (CacheLookup, TryStateQuery)):
                self._answer(c, result)
                return None
            if result is not None:
                killed = c.kill_reason is not None
                c.workload, c.deadline, c.kill_reason = None, None, None
                if killed:  # it reported, but was killed meanwhile: never reuse the process
                    self._replace(c)
                return result
        if not c.process.is_alive() or c.kill_reason is not None or (
            c.deadline is not None and now_mono >= c.deadline
        ):
            kind = TIMED_OUT if (c.deadline is not None and now_mono >= c.deadline
                                 and c.kill_reason is None) else CRASHED
            reason = c.kill_reason
            if c.process.is_alive():
                self._kill(c)
            code = c.process.exitcode
            self._replace(c)
            if reason == "superseded":
                self._stopped.append((w.ti_id, w.try_number))
                return None
            self.crashed_tries += kind == CRASHED
            error = (f"execution_timeout of {w.execution_timeout}s exceeded; the try was killed"
                     if kind == TIMED_OUT else
                     f"the task process died without reporting (exit code {code})")
            return TryResult(ti_id=w.ti_id, try_number=w.try_number, dag_id=w.dag_id,
                             run_id=w.run_id, task_id=w.task_id, dag_run_id=w.dag_run_id,
                             kind=kind, error=error, hostname=HOSTNAME,
                             pid=c.process.pid, log_path=w.log_path)
        return None

    def _kill(self, c: _Child, grace: float = 3.0) -> None:
        try:
            os.kill(c.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        c.process.join(grace)
        if c.process.is_alive():
            c.process.kill()
            c.process.join(1.0)

    def _replace(self, c: _Child) -> None:
        try:
            c.conn.close()
        except OSError:
            pass
        fresh = self._spawn()
        c.process, c.conn = fresh.process, fresh.conn
        c.workload, c.deadline, c.kill_reason = None, None, None

    def _apply_and_dispatch(self, results: list[TryResult]) -> None:
        idle = [c for c in self._children if c.idle]
        with self._lock:
            n = min(len(idle), len(self._pending))
            ids = [self._pending.popleft() for _ in range(n)]
        stopped, self._stopped = self._stopped, []
        if not ids and not results and not stopped:
            return
        pids = {ti_id: idle[i].process.pid for i, ti_id in enumerate(ids)}
        with transaction(self.engine) as conn:
            now = self.clock()
            if results:
                apply_results(conn, results, now=now, views=self.views)
            if stopped:
                settle_stopped_tries(conn, stopped, now=now, actor=Actor.WORKER,
                                     why="was killed")
            workloads = start_tries(conn, ids, now=now, hostname=HOSTNAME, pids=pids,
                                    views=self.views, logs_folder=self.logs_folder) if ids else []
        by_id = {w.ti_id: w for w in workloads}
        now_mono = time.monotonic()
        for i, ti_id in enumerate(ids):
            w = by_id.get(ti_id)
            if w is None:
                continue
            c = idle[i]
            c.workload = w
            c.started_at = now_mono
            # The task process enforces execution_timeout itself; this is the backstop.
            c.deadline = now_mono + w.execution_timeout + 5.0 if w.execution_timeout else None
            try:
                c.conn.send(w)
            except (OSError, BrokenPipeError):
                c.kill_reason = "send failed"

    def _heartbeat(self) -> None:
        running = [(c.workload.ti_id, c.workload.try_number) for c in self._children
                   if c.workload is not None]
        if not running:
            return
        now = self.clock()
        with transaction(self.engine) as conn:
            ti_repo.heartbeat(conn, running, now)
            c_ = task_instance.c
            still = {
                (r.id, r.try_number)
                for r in conn.execute(
                    select(c_.id, c_.try_number).where(
                        tuple_(c_.id, c_.try_number).in_(running),
                        c_.state == TI.RUNNING.value,
                    )
                ).all()
            }
        for c in self._children:
            w = c.workload
            if w is not None and (w.ti_id, w.try_number) not in still:
                log.warning("%s.%s try %s is no longer running in the database; killing it",
                            w.dag_id, w.task_id, w.try_number)
                c.kill_reason = "superseded"
                self._kill(c)

    def _answer(self, c: _Child, request: Any) -> None:
        try:
            reply = answer_request(self.engine, request, now=self.clock())
        except Exception as exc:
            log.exception("could not answer %r", request)
            reply = exc
        try:
            c.conn.send(reply)
        except (OSError, BrokenPipeError):
            pass

    def _on_transitions(self, events: Sequence[door.TransitionEvent]) -> None:
        # A try of ours left running through someone else (a person, the scheduler): kill it now.
        mine = {c.workload.ti_id for c in self._children if c.workload is not None}
        if any(e.entity == door.ENTITY_TI and e.frm == TI.RUNNING.value and e.to != e.frm
               and e.actor not in _OWN_ACTORS and e.entity_id in mine for e in events):
            self._check_now.set()
            self._poke()

    # for tests and the CLI
    def busy_count(self) -> int:
        return sum(1 for c in self._children if not c.idle)

    def now(self) -> datetime:
        return self.clock()


_OWN_ACTORS = frozenset({Actor.WORKER.value, Actor.EXECUTOR.value})
