"""DAG-level callbacks: ``DAG(on_success_callback=..., on_failure_callback=...)``.

The scheduler never imports user code, so it cannot call them. Instead, the transaction that
ends a run (``success`` or ``failed``, whoever decided it: the scheduler from the leaves, or a
person marking the run) also writes one row to the ``dag_callback`` outbox
(:func:`enqueue_run_callbacks`). An executor's :class:`DagCallbackRunner` claims pending rows
(a compare-and-set: one runner runs each), loads the DAG file in a fresh process, calls the
callbacks with the run's context and records the outcome; a callback that raises is recorded in
the run's state history and never changes the run's state. A claim whose runner died is taken
again after ``timeout_seconds`` (at least once, at most three attempts). A cancelled run queues
no callback. ``dag.test()`` runs the callbacks in its own process
(:func:`run_pending_in_process`).
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import socket
import threading
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Engine, select

from statewright.core.clock import Clock, utcnow
from statewright.core.states import RUN, DagRunState
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import dag_callbacks as outbox
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import deadlines as deadline_repo
from statewright.db.tables import dag_run
from statewright.sdk import masking
from statewright.services.loop_failures import LoopFailures
from statewright.services.worker import fork_server

log = logging.getLogger("statewright.callbacks")
ON_SUCCESS = "on_success_callback"
ON_FAILURE = "on_failure_callback"


def enqueue_run_callbacks(conn: Connection, run_pks: Iterable[int], *, state: DagRunState,
                          serialized: Mapping[str, Any], now: datetime,
                          reason: str | None = None) -> int:
    """Queue the DAG's callback for runs that just reached ``state`` (in the same transaction)."""
    state = RUN(state)
    if state is RUN.SUCCESS and serialized.get("has_on_success_callback"):
        kind = ON_SUCCESS
    elif state is RUN.FAILED and serialized.get("has_on_failure_callback"):
        kind = ON_FAILURE
    else:
        return 0
    pks = list(run_pks)
    if not pks:
        return 0
    rows = conn.execute(
        select(dag_run.c.id, dag_run.c.dag_id, dag_run.c.run_id).where(dag_run.c.id.in_(pks))
    ).all()
    outbox.add(conn, [
        {"dag_run_id": r.id, "dag_id": r.dag_id, "run_id": r.run_id, "kind": kind,
         "run_state": state.value, "reason": reason, "created_at": now}
        for r in rows
    ])
    return len(rows)


@dataclass
class DagCallbackRequest:
    """Everything a process needs to call one run's DAG-level callbacks (picklable)."""

    callback_id: int
    dag_id: str
    run_id: str
    dag_run_id: int
    kind: str
    run_state: str
    reason: str | None
    fileloc: str | None
    conf: dict[str, Any] = field(default_factory=dict)
    logical_date: datetime | None = None
    data_interval_start: datetime | None = None
    data_interval_end: datetime | None = None
    deadline: dict[str, Any] | None = None
    """A missed deadline's alert: id, alert_index, deadline_time, reference, callback."""


@dataclass
class DagCallbackReport:
    callback_id: int
    ok: bool
    calls: int = 0
    errors: list[str] = field(default_factory=list)


def run_dag_callbacks(request: DagCallbackRequest, dag: Any = None) -> DagCallbackReport:
    """Call the run's callbacks (in the process that runs user code)."""
    from statewright.sdk.context import Context, DagRunInfo

    if dag is None:
        from statewright.services.worker.task_runner import _load_dag

        try:
            if not request.fileloc:
                raise RuntimeError(f"DAG {request.dag_id!r} has no file to load it from")
            dag = _load_dag(request.fileloc, request.dag_id)
        except Exception as exc:
            log.exception("could not load DAG %s for its %s", request.dag_id, request.kind)
            return DagCallbackReport(request.callback_id, False,
                                     errors=[f"could not load the DAG: {type(exc).__name__}: "
                                             f"{exc}"])
    dag_run_info = DagRunInfo(
        dag_id=request.dag_id, run_id=request.run_id, conf=dict(request.conf),
        logical_date=request.logical_date, data_interval_start=request.data_interval_start,
        data_interval_end=request.data_interval_end)
    context = Context(
        dag=dag, dag_run=dag_run_info, run_id=request.run_id, conf=dict(request.conf),
        params={**dag.params, **request.conf}, logical_date=request.logical_date,
        state=request.run_state, reason=request.reason, exception=None,
    )
    report = DagCallbackReport(request.callback_id, True)
    if request.deadline is not None:
        from statewright.services.worker.deadline_callbacks import run_deadline_callback

        return run_deadline_callback(request, dag, report)
    for fn in getattr(dag, request.kind, None) or ():
        report.calls += 1
        try:
            fn(context)
        except Exception as exc:
            log.error("%s %s of DAG %s raised:\n%s", request.kind, _name(fn), request.dag_id,
                      traceback.format_exc())
            report.errors.append(f"{request.kind} {_name(fn)} raised {type(exc).__name__}: "
                                 f"{exc}; the run's state is unchanged")
    report.ok = not report.errors
    # Stored as the run's notes: secrets the callbacks registered are *** (in this process).
    report.errors = [masking.redact(e) for e in report.errors]
    return report


def _name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def claim(engine: Engine, *, now: datetime, claimed_by: str, limit: int,
          timeout: timedelta) -> list[DagCallbackRequest]:
    with transaction(engine) as conn:
        rows = outbox.claim(conn, now=now, claimed_by=claimed_by, limit=limit,
                            stale_before=now - timeout)
        if not rows:
            return []
        runs = {r.id: r for r in conn.execute(select(dag_run).where(
            dag_run.c.id.in_([row.dag_run_id for row in rows]))).all()}
        files = {d: dag_repo.get_dag(conn, d) for d in {row.dag_id for row in rows}}
        missed = deadline_repo.by_callback(conn, [row.id for row in rows])
    out = []
    for row in rows:
        run, dag_row = runs.get(row.dag_run_id), files.get(row.dag_id)
        out.append(DagCallbackRequest(
            callback_id=row.id, dag_id=row.dag_id, run_id=row.run_id,
            dag_run_id=row.dag_run_id, kind=row.kind, run_state=row.run_state,
            reason=row.reason, fileloc=dag_row.fileloc if dag_row is not None else None,
            conf=dict(run.conf or {}) if run is not None else {},
            logical_date=run.logical_date if run is not None else None,
            data_interval_start=run.data_interval_start if run is not None else None,
            data_interval_end=run.data_interval_end if run is not None else None,
            deadline=_deadline(missed.get(row.id))))
    return out


def _deadline(row: Any) -> dict[str, Any] | None:
    if row is None:
        return None
    return {"id": row.id, "alert_index": row.alert_index, "reference": row.reference,
            "deadline_time": row.deadline_time, "callback": dict(row.callback)}


def record(engine: Engine, reports: Sequence[tuple[DagCallbackRequest, DagCallbackReport]], *,
           now: datetime) -> None:
    with transaction(engine) as conn:
        for request, report in reports:
            outbox.finish(conn, request.callback_id, now=now, ok=report.ok,
                          error="\n".join(report.errors) or None)
            for error in report.errors:
                door.note_dag_runs(conn, [(request.dag_run_id, error)], actor=Actor.WORKER,
                                   now=now)


def run_pending_in_process(engine: Engine, dags: Mapping[str, Any], *,
                           clock: Clock = utcnow) -> int:
    """Run every pending DAG callback here, with the DAG objects given (``dag.test()``)."""
    requests = claim(engine, now=clock(), claimed_by=_me(), limit=100,
                     timeout=timedelta(minutes=5))
    reports = [(r, run_dag_callbacks(r, dags.get(r.dag_id))) for r in requests]
    if reports:
        record(engine, reports, now=clock())
    return len(reports)


def _me() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _child(conn: Any, request: DagCallbackRequest) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the fork server ignores it (``preloaded``)
    try:
        report = run_dag_callbacks(request)
    except BaseException as exc:
        report = DagCallbackReport(request.callback_id, False,
                                   errors=[f"{type(exc).__name__}: {exc}"])
    conn.send(report)


class DagCallbackRunner:
    """A thread of an executor's process: claims queued DAG callbacks and runs each in a fresh
    process (so user code never runs in the executor's process), with a time limit."""

    def __init__(self, engine: Engine, *, clock: Clock = utcnow, context: Any = None,
                 poll_seconds: float = 2.0, timeout_seconds: float = 60.0) -> None:
        self.engine = engine
        self.clock = clock
        self.ctx = context or mp.get_context("forkserver")
        self.poll_seconds = poll_seconds
        self.timeout = timedelta(seconds=timeout_seconds)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._remove_listener: Callable[[], None] | None = None

    def start(self) -> DagCallbackRunner:
        self._remove_listener = door.add_transition_listener(self._on_events)
        self._thread = threading.Thread(target=self._loop, name="dag-callbacks", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._remove_listener:
            self._remove_listener()
        if self._thread:
            self._thread.join(timeout)

    def _on_events(self, events: Sequence[door.TransitionEvent]) -> None:
        if any(e.entity == door.ENTITY_RUN and e.to in (RUN.SUCCESS.value, RUN.FAILED.value)
               for e in events):
            self._wake.set()

    def _loop(self) -> None:
        failures = LoopFailures("running DAG callbacks", log, period=self.poll_seconds)
        while not self._stop.is_set():
            try:
                busy = self.run_once()
            except Exception as exc:
                self._stop.wait(failures.failed(exc))
                continue
            failures.succeeded()
            if busy:
                continue
            self._wake.wait(self.poll_seconds)
            self._wake.clear()

    def run_once(self) -> int:
        requests = claim(self.engine, now=self.clock(), claimed_by=_me(), limit=4,
                         timeout=self.timeout)
        reports = [(r, self._run_in_process(r)) for r in requests]
        if reports:
            record(self.engine, reports, now=self.clock())
        return len(reports)

    def _run_in_process(self, request: DagCallbackRequest) -> DagCallbackReport:
        parent, child = self.ctx.Pipe()
        process = self.ctx.Process(target=_child, args=(child, request), daemon=True,
                                   name="statewright-dag-callback")
        fork_server.start(process)
        child.close()
        try:
            if parent.poll(self.timeout.total_seconds()):
                try:
                    return parent.recv()  # type: ignore[no-any-return]
                except (EOFError, OSError):
                    pass
            error = (f"{request.kind} of DAG {request.dag_id} did not finish within "
                     f"{self.timeout.total_seconds():g}s, or its process died; it was stopped")
            return DagCallbackReport(request.callback_id, False, errors=[error])
        finally:
            process.join(0.5)
            if process.is_alive():
                process.kill()
                process.join(1.0)
            parent.close()
