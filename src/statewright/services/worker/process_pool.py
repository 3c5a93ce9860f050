"""A pool of task processes supervised by one thread: the part of a worker that runs tries.

The supervisor (a thread of the process that owns the pool: the scheduler's local executor, or
a ``statewright celery-worker``) holds the database session; the task processes hold none. For
each batch of submitted task instances it starts the tries (queued → running, one transaction,
fenced on the try number when the caller gives one), sends each workload down a pipe to an idle
task process, and then applies the outcomes in batches (``outcome.apply_results``), in a
transaction of their own, while the task processes run the tries just sent. A task process
that dies (segfault, ``os._exit``, OOM kill) is replaced; its try ends ``Crashed``. A try past
its ``execution_timeout`` is killed and ends ``TimedOut``. The supervisor heartbeats its running
tries, and kills a try whose task instance is no longer running its try (marked, cleared,
cancelled elsewhere).

Whoever submits a task instance may pass ``on_done``: it is called once, from the supervisor
thread, with a :class:`Done` saying how that submission ended.

With ``lease_seconds`` (a Celery worker), a try that the database has not confirmed for that long
(no heartbeat got through: the database is unreachable, or the supervisor is stuck waiting for
it) is killed by a watchdog thread. The scheduler's zombie reaper ends such a try ``Crashed``
after the zombie threshold and a next try may start elsewhere; a lease shorter than that
threshold means the old process is gone by then.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from statewright.config import input_limits as settings_input_limits
from statewright.core.clock import Clock, utcnow
from statewright.core.limits import InputLimits
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.services.controls.stopped import settle_stopped_tries
from statewright.services.dag_view import DagViewCache
from statewright.services.secrets.relay import SecretRequest
from statewright.services.worker import fork_server
from statewright.services.worker.caching import CacheLookup
from statewright.services.worker.callbacks import TryStateQuery
from statewright.services.worker.callbacks import answer as answer_request
from statewright.services.worker.lifeline import task_process_main
from statewright.services.worker.memory import MemoryWatch
from statewright.services.worker.outcome import (
    CRASHED,
    INTERRUPTED,
    TIMED_OUT,
    TryResult,
    apply_results,
)
from statewright.services.worker.pool_liveness import (
    _LEASE,
    PoolLiveness,
    leaves_running_elsewhere,
)
from statewright.services.worker.pool_parts import (
    LOST,
    NOT_STARTED,
    START_FAILED,
    STOPPED,
    UNAPPLIED,
    Child,
    Done,
    OnDone,
    Request,
    close_pipes,
    notify,
)
from statewright.services.worker.sendable import send_or_fail
from statewright.services.worker.step_parts import Written, write_guarded
from statewright.services.worker.task_runner import HOSTNAME
from statewright.services.worker.task_state import StateRequest
from statewright.services.worker.workload import fail_unstartable, start_tries

log = logging.getLogger("statewright.worker.pool")

_IMPORT_KEEP = 30.0
_IMPORT_KEEP_MAX = 600.0

class TaskProcessPool(PoolLiveness):
    def __init__(
        self,
        engine: Engine,
        *,
        processes: int = 4,
        logs_folder: Path | None = None,
        clock: Clock = utcnow,
        heartbeat_seconds: float = 5.0,
        views: DagViewCache | None = None,
        start_actor: Actor = Actor.EXECUTOR,
        lease_seconds: float | None = None,
        after_step: Callable[[], None] | None = None,
        warm_processes: int = 1,
        idle_seconds: float = 10.0,
        max_tries_per_process: int | None = None,
        max_memory_growth_mib: float | None = 256.0,
        input_limits: InputLimits | None = None,
    ) -> None:
        self.engine = engine
        self.input_limits = input_limits or settings_input_limits()
        """A workload past them (or that cannot be pickled) fails its try, never sent."""
        self.after_step = after_step
        """Called by the supervisor thread after each step (a batch applied and started)."""
        self.processes = max(1, processes)
        self.warm_processes = max(0, min(warm_processes, self.processes))
        """Task processes kept forked and idle: the others are forked when work comes and
        retired after ``idle_seconds`` without a try."""
        self.idle_seconds = idle_seconds
        self.max_tries_per_process = (None if max_tries_per_process is None
                                      else max(1, max_tries_per_process))
        self.max_memory_growth = (None if max_memory_growth_mib is None
                                  else int(max_memory_growth_mib * 2**20))
        """Grown this much past its memory after its first try (or past ``max_tries_per_process``
        tries), a process is retired once idle: what tasks leave behind does not pile up, and a
        process does not import its (possibly big) DAG file again for nothing."""
        self.logs_folder = logs_folder
        self.clock = clock
        self.heartbeat_seconds = heartbeat_seconds
        self.views = views or DagViewCache()
        self.start_actor = start_actor
        self.lease_seconds = lease_seconds
        self.context = mp.get_context("forkserver")
        self._pending: deque[Request] = deque()
        self._lock = threading.Lock()
        # Held while a child changes hands (released, replaced, given a try) and while the lease
        # watchdog looks at the children: it never kills a process that just got a new try.
        self._guard = threading.RLock()
        self._wake_r, self._wake_w = self.context.Pipe(duplex=False)
        self._children: list[Child] = []
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._last_heartbeat = 0.0
        self.crashed_tries = 0
        # Controls (clear, mark, cancel): check running tries at once when one leaves running
        # in this process, and settle the tries killed for it.
        self._check_now = threading.Event()
        self._stopped: list[tuple[int, int]] = []
        self._remove_listener: Any = None
        self._grace: float | None = None
        """Set by ``interrupt``: a try that ends without a report is Interrupted, not Crashed."""

    # -- interface ---------------------------------------------------------------------------

    def submit(self, ti_ids: Sequence[int], *, fences: Mapping[int, int] | None = None,
               on_done: OnDone | None = None) -> None:
        """Start and run the tries of ``ti_ids`` as processes free up. ``fences`` maps a task
        instance to the try number it had when it was queued: it starts only at that try."""
        fences = fences or {}
        with self._lock:
            self._pending.extend(Request(pk, fences.get(pk), on_done) for pk in ti_ids)
        self._poke()

    def start(self) -> None:
        if not fork_server.share_inherited_fork_server():
            self.context.set_forkserver_preload(fork_server.PRELOAD)
        self._children = [self._spawn() for _ in range(self.warm_processes)]
        self._thread = threading.Thread(target=self._loop, name="task-process-pool",
                                        daemon=True)
        self._thread.start()
        if self.lease_seconds is not None:
            threading.Thread(target=self._watch_leases, name="task-lease-watchdog",
                             daemon=True).start()
        self._remove_listener = door.add_transition_listener(self._on_transitions)

    def stop(self, timeout: float = 10.0, *, grace: float | None = None) -> None:
        """Stop the pool. With ``grace`` (a graceful shutdown) it first hands back what it
        holds: see :func:`services.worker.shutdown.hand_back`."""
        if self._remove_listener is not None:
            self._remove_listener()
        self._stop.set()
        self._poke()
        if self._thread:
            self._thread.join(timeout)
        if grace is not None:
            from statewright.services.worker.shutdown import hand_back

            try:
                hand_back(self, grace)
            except Exception:  # the database is unreachable: recovery ends them Crashed
                log.exception("could not hand back the running tries at shutdown")
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
            close_pipes(c.conn, c.lifeline)
        self._children.clear()

    def interrupt(self, grace: float) -> None:
        """A graceful stop while the pool still runs (a Celery worker's warm shutdown): ask each
        running try to stop now (SIGTERM: ``TaskInterrupted`` in the task); the ones still
        running ``grace`` seconds later are killed. Both end up_for_retry or failed, named
        Interrupted, applied by the supervisor thread as usual."""
        self._grace = grace
        with self._guard:
            busy = [c for c in self._children if c.workload is not None]
        for c in busy:
            with contextlib.suppress(ProcessLookupError):
                os.kill(c.process.pid, signal.SIGTERM)
        timer = threading.Timer(grace, self._kill_interrupted,
                                args=([(c, c.workload) for c in busy],))
        timer.daemon = True
        timer.start()

    def _kill_interrupted(self, asked: list[tuple[Child, Any]]) -> None:
        with self._guard:
            for c, w in asked:
                if c.workload is w and c.kill_reason is None:  # still on the try we asked
                    c.kill_reason = _INTERRUPT
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(c.process.pid, signal.SIGKILL)
        self._poke()

    def busy_count(self) -> int:
        return sum(1 for c in self._children if not c.idle)

    def pending_count(self) -> int:
        with self._lock:
            return len(self._pending)

    # -- internals ---------------------------------------------------------------------------

    def _poke(self) -> None:
        try:
            self._wake_w.send_bytes(b"x")
        except (OSError, BrokenPipeError):
            pass

    def _spawn(self) -> Child:
        parent, child = self.context.Pipe()
        life_r, life_w = self.context.Pipe(duplex=False)
        p = self.context.Process(target=task_process_main, name="statewright-task",
                                 args=(child, life_r, dict(os.environ)), daemon=True)
        fork_server.start(p)
        close_pipes(child, life_r)
        return Child(process=p, conn=parent, lifeline=life_w, idle_since=time.monotonic())

    def check_now(self) -> None:
        """Check at once that the running tries still run in the database (a control moved one
        elsewhere); a try that does not is killed."""
        self._check_now.set()
        self._poke()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._step()
            except Exception:
                log.exception("task process pool step failed")
                time.sleep(0.5)
            finally:
                self._after_step()

    def _after_step(self) -> None:
        if self.after_step is not None:
            try:
                self.after_step()
            except Exception:
                log.exception("after_step failed")

    def _step(self) -> None:
        busy = [c for c in self._children if not c.idle]
        waitables: list[Any] = [self._wake_r]
        for c in busy:
            waitables += [c.conn, c.process.sentinel]
        ready = wait(waitables, self._next_timeout(busy)) if busy or not self._has_work() else []
        if self._wake_r in ready:
            while self._wake_r.poll():
                self._wake_r.recv_bytes()
        results: list[tuple[TryResult, OnDone | None]] = []
        now_mono = time.monotonic()
        for c in busy:
            on_done = c.on_done
            result = self._collect(c, now_mono)
            if result is not None:
                results.append((result, on_done))
        self._grow()
        self._apply_and_dispatch(results)
        self._after_step()  # what the step committed goes out before the pool's own upkeep
        self._retire(time.monotonic())
        if now_mono - self._last_heartbeat >= self.heartbeat_seconds or self._check_now.is_set():
            self._check_now.clear()
            self._last_heartbeat = now_mono
            self._heartbeat()

    def _has_work(self) -> bool:
        with self._lock:
            return bool(self._pending) and (len(self._children) < self.processes
                                            or any(c.idle for c in self._children))

    def _grow(self) -> None:
        """Fork the task processes the pending requests need, up to ``processes``."""
        with self._lock:
            pending = len(self._pending)
        idle = sum(1 for c in self._children if c.idle)
        missing = min(pending - idle, self.processes - len(self._children))
        if missing > 0:
            fresh = [self._spawn() for _ in range(missing)]
            with self._guard:
                self._children = [*self._children, *fresh]

    def _retire(self, now_mono: float) -> None:
        """Let idle processes go: those that ran ``max_tries_per_process`` tries or grew too
        much, and those idle for ``idle_seconds`` beyond the ``warm_processes`` kept; a kept one
        that ran tries and stayed idle that long is exchanged for a fresh fork."""
        if self.max_memory_growth is not None:
            for c in self._children:
                if c.idle:
                    c.memory.refresh(c.process.pid, now_mono)
        with self._guard:
            worn = [c for c in self._children if c.idle and (
                c.memory.grown_past(self.max_memory_growth) or (
                    self.max_tries_per_process is not None
                    and c.tries >= self.max_tries_per_process))]
            keep = [c for c in self._children if c not in worn]
            stale = sorted((c for c in keep if c.idle and now_mono - c.idle_since
                            >= self._idle_limit(c)), key=lambda c: c.idle_since)
            stale, used = (stale[:max(0, len(keep) - self.warm_processes)],
                           stale[max(0, len(keep) - self.warm_processes):])
            gone = worn + stale
            self._children = [c for c in keep if c not in stale]
        for c in gone:
            self._dismiss(c)
        for c in used:
            if c.tries:  # a warm process holds what its tries imported: a fresh fork holds less
                self._dismiss(c)
                self._replace(c)

    def _idle_limit(self, c: Child) -> float:
        """How long ``c`` may stay idle: ``idle_seconds``, or longer for a process that spent
        long importing DAG files (a file of 100,000 tasks takes seconds): at most 1/30 of the
        time kept goes to importing again, up to ``_IMPORT_KEEP_MAX`` seconds."""
        return max(self.idle_seconds, min(_IMPORT_KEEP * c.imported, _IMPORT_KEEP_MAX))

    @staticmethod
    def _dismiss(c: Child) -> None:
        try:
            c.conn.send(None)  # child_main returns: the process exits
        except (OSError, BrokenPipeError):
            pass
        c.process.join(1.0)
        if c.process.is_alive():
            c.process.kill()
            c.process.join(1.0)
        close_pipes(c.conn, c.lifeline)

    def _next_timeout(self, busy: list[Child]) -> float:
        t = self.heartbeat_seconds
        now = time.monotonic()
        for c in busy:
            if c.deadline is not None:
                t = min(t, max(0.0, c.deadline - now))
        return t

    def _collect(self, c: Child, now_mono: float) -> TryResult | None:
        w = c.workload
        assert w is not None
        if c.conn.poll():
            try:
                result: TryResult = c.conn.recv()
            except (EOFError, OSError):
                result = None  # type: ignore[assignment]
            if isinstance(result, (CacheLookup, TryStateQuery, SecretRequest, StateRequest)):
                self._answer(c, result)
                return None
            if result is not None:
                c.imported += result.import_seconds
                killed = c.kill_reason is not None
                self._release(c)
                if killed:  # it reported, but was killed meanwhile: never reuse the process
                    self._replace(c)
                return result
        if not c.process.is_alive() or c.kill_reason is not None or (
            c.deadline is not None and now_mono >= c.deadline
        ):
            kind = TIMED_OUT if (c.deadline is not None and now_mono >= c.deadline
                                 and c.kill_reason in (None, _LEASE)) else CRASHED
            reason = c.kill_reason
            if kind == CRASHED and self._grace is not None and reason != _LEASE:
                kind = INTERRUPTED
            on_done = c.on_done
            if c.process.is_alive():
                self._kill(c)
            code = c.process.exitcode
            self._replace(c)
            if reason == "superseded":
                self._stopped.append((w.ti_id, w.try_number))
                notify(on_done, Done(w.ti_id, STOPPED, w.try_number))
                return None
            self.crashed_tries += kind == CRASHED
            error = (f"execution_timeout of {w.execution_timeout}s exceeded; the try was killed"
                     if kind == TIMED_OUT else
                     f"the worker is shutting down: it did not stop within the grace period of "
                     f"{self._grace:g} s, so it was killed" if reason == _INTERRUPT else
                     "the worker is shutting down: the task process ended without reporting"
                     if kind == INTERRUPTED else
                     f"the worker could not reach the database for more than "
                     f"{self.lease_seconds}s, so it killed the try" if reason == _LEASE else
                     f"the task process died without reporting (exit code {code})")
            return TryResult.of(w, kind=kind, error=error, hostname=HOSTNAME,
                                pid=c.process.pid)
        return None

    def _kill(self, c: Child, grace: float = 3.0) -> None:
        try:
            os.kill(c.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        c.process.join(grace)
        if c.process.is_alive():
            c.process.kill()
            c.process.join(1.0)

    def _release(self, c: Child, *, tried: bool = True) -> None:
        if tried and self.max_memory_growth is not None:
            c.memory.after_try(c.process.pid, time.monotonic())
        with self._guard:
            c.workload, c.on_done, c.deadline, c.kill_reason = None, None, None, None
            c.idle_since = time.monotonic()

    def _replace(self, c: Child) -> None:
        with self._guard:
            close_pipes(c.conn, c.lifeline)
            fresh = self._spawn()
            c.process, c.conn, c.lifeline = fresh.process, fresh.conn, fresh.lifeline
            c.tries = 0
            c.memory = MemoryWatch()  # the fresh process's baseline comes after its first try
            self._release(c, tried=False)

    def _apply_and_dispatch(self, results: list[tuple[TryResult, OnDone | None]]) -> None:
        """Start the next tries and send them to the idle processes, then apply the finished
        tries: two transactions, so the task processes run while the second one commits."""
        idle = [c for c in self._children if c.idle]
        requests = self._take(len(idle))
        stopped, self._stopped = self._stopped, []
        failed: Exception | None = None
        if requests:
            try:
                results = results + self._start_and_send(requests, idle)
            except Exception as exc:  # passing: the finished tries are still applied
                failed = exc
        if results or stopped:
            self._finish(results, stopped)
        if failed is not None:
            raise failed

    def _start_and_send(self, requests: Sequence[Request], idle: Sequence[Child]
                        ) -> list[tuple[TryResult, OnDone | None]]:
        """Start the tries and send them; returns the failed results of those not sendable."""
        ids = [r.ti_id for r in requests]
        pids = {ti_id: idle[i].process.pid for i, ti_id in enumerate(ids)}
        fences = {r.ti_id: r.fence for r in requests if r.fence is not None}
        written = write_guarded(
            self._write, self._fail_unstartable, [], [], ids, pids, fences,
            if_passing=[(req.on_done, Done(req.ti_id, START_FAILED)) for req in requests])
        by_id = {w.ti_id: w for w in written.workloads}
        unsent: list[tuple[TryResult, OnDone | None]] = []
        now_mono = time.monotonic()
        for i, req in enumerate(requests):
            w = by_id.get(req.ti_id)
            if w is None:  # not queued at its fence any more, or could not start
                notify(req.on_done, Done(req.ti_id, written.ended.get(req.ti_id, NOT_STARTED)))
                continue
            c = idle[i]
            with self._guard:
                c.started_at = c.confirmed = now_mono
                # The task process enforces execution_timeout itself; this is the backstop.
                c.deadline = (now_mono + w.execution_timeout + 5.0 if w.execution_timeout
                              else None)
                c.on_done = req.on_done
                c.workload = w
                c.tries += 1
            try:
                failed = send_or_fail(c.conn, w, self.input_limits, pid=c.process.pid)
            except OSError:
                c.kill_reason = "send failed"
                continue
            if failed is not None:  # the process got nothing: it stays, the try fails
                self._release(c)
                unsent.append((failed, req.on_done))
        return unsent

    def _finish(self, results: Sequence[tuple[TryResult, OnDone | None]],
                stopped: Sequence[Any]) -> None:
        written = write_guarded(
            self._write, self._fail_unstartable, results, stopped, [], {}, {},
            if_passing=[(on_done, Done(r.ti_id, UNAPPLIED, r.try_number))
                        for r, on_done in results])
        for r, on_done in results:
            state = written.reached.get(r.ti_id)
            outcome = (state.value if state is not None
                       else UNAPPLIED if r.ti_id in written.unapplied else LOST)
            notify(on_done, Done(r.ti_id, outcome, r.try_number))

    def _write(self, results: Sequence[tuple[TryResult, OnDone | None]],
               stopped: Sequence[Any], ids: Sequence[int], pids: Mapping[int, int],
               fences: Mapping[int, int]) -> Written:
        """One transaction: apply the finished tries, settle the stopped ones, start tries."""
        with transaction(self.engine) as conn:
            now = self.clock()
            reached = (apply_results(conn, [r for r, _ in results], now=now, views=self.views)
                       if results else {})
            if stopped:
                settle_stopped_tries(conn, stopped, now=now, actor=Actor.WORKER,
                                     why="was killed")
            workloads = start_tries(
                conn, ids, now=now, hostname=HOSTNAME, pids=pids, views=self.views,
                logs_folder=self.logs_folder, actor=self.start_actor,
                fences=fences) if ids else []
        return Written(reached, workloads)

    def _fail_unstartable(self, ti_id: int, fence: int | None, error: BaseException) -> bool:
        with transaction(self.engine) as conn:
            return fail_unstartable(conn, ti_id, fence=fence, now=self.clock(),
                                    actor=self.start_actor, error=error)

    def _take(self, n: int) -> list[Request]:
        """Up to ``n`` pending requests, one per task instance: a second request for a task
        instance in the batch (a duplicated message) waits for the next batch, where it meets
        the state the first one left."""
        taken: list[Request] = []
        later: list[Request] = []
        seen: set[int] = set()
        with self._lock:
            while self._pending and len(taken) < n:
                r = self._pending.popleft()
                (later if r.ti_id in seen else taken).append(r)
                seen.add(r.ti_id)
            self._pending.extendleft(reversed(later))
        return taken

    def _answer(self, c: Child, request: Any) -> None:
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
        if leaves_running_elsewhere(events, mine):
            self.check_now()


_INTERRUPT = "interrupt"
