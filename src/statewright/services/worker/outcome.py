"""Applying the outcome of a try: the worker side of the state machine, batched.

A task process reports a ``TryResult``; the supervising worker applies it through the door,
fenced on the try number (a report for try 3 can never change try 4), together with the task's
result, the per-try history row and the skips a branch decided.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from statewright.core.retry import decide_failure, decision_from_report
from statewright.core.states import TI, StateName, TaskInstanceState
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import xcoms as xcom_repo
from statewright.services.asset_events import record_try_outlets
from statewright.services.dag_view import DagViewCache
from statewright.services.secrets.masks import mask_results
from statewright.services.worker import deferral
from statewright.services.worker.dag_run_requests import apply_requests
from statewright.services.worker.rendered import record_rendered_fields

POLICY_EXTRA_KEY = "retry_policy"
"""Where a try's result carries its retry policy's decision (``sdk.retry_policy.EXTRA_KEY``)."""

# Kinds a task process may report, plus the ones the supervisor infers.
SUCCESS = "success"
SKIPPED = "skipped"
FAILED = "failed"
FAIL_NO_RETRY = "fail_no_retry"
CRASHED = "crashed"  # the process died without reporting (killed, OOM, segfault, os._exit)
TIMED_OUT = "timed_out"  # execution_timeout passed; the process was killed
INTERRUPTED = "interrupted"  # its worker stopped (SIGTERM) and asked the try to end
CACHED = "cached"


@dataclass
class TryResult:
    ti_id: int
    try_number: int
    dag_id: str
    run_id: str
    task_id: str
    dag_run_id: int
    kind: str
    return_value: Any = None
    skip_task_ids: list[str] = field(default_factory=list)
    error: str | None = None
    traceback: str | None = None
    hostname: str | None = None
    pid: int | None = None
    log_path: str | None = None
    start_date: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    map_index: int = -1
    import_seconds: float = 0.0
    """Time the task process spent importing DAG files for this try (0 when it had them): the
    pool keeps a process that paid for a big import idle for longer."""
    dag_version_id: int | None = None
    """The DAG version the try ran (from its start), for its history row."""

    @classmethod
    def of(cls, w: Any, **fields: Any) -> TryResult:
        """A result of the try of workload ``w`` (its identity copied from the workload)."""
        return cls(ti_id=w.ti_id, try_number=w.try_number, dag_id=w.dag_id, run_id=w.run_id,
                   task_id=w.task_id, dag_run_id=w.dag_run_id, map_index=w.map_index,
                   log_path=w.log_path, dag_version_id=getattr(w, "dag_version_id", None),
                   **fields)


_NEEDS_NO_DAG = frozenset({SUCCESS, CACHED, SKIPPED, FAIL_NO_RETRY})

_NAMES = {
    CRASHED: StateName.CRASHED,
    TIMED_OUT: StateName.TIMED_OUT,
    INTERRUPTED: StateName.INTERRUPTED,
}


def apply_results(
    conn: Connection,
    results: Sequence[TryResult],
    *,
    now: datetime,
    views: DagViewCache,
    actor: Actor = Actor.WORKER,
) -> dict[int, TaskInstanceState]:
    """Apply finished tries; returns ti_id → the state each one reached (lost races left out)."""
    if not results:
        return {}
    mask_results(results)  # secrets in errors, tracebacks, rendered fields: *** when stored
    apply_requests(conn, results, now=now, actor=actor)  # runs a TriggerDagRunOperator asks for
    everything = list(results)
    # Tries that wait (deferred, rescheduled) do not end: applied apart, no history row.
    waiting = [r for r in results if r.kind in deferral.KINDS]
    reached: dict[int, TaskInstanceState] = {}
    if waiting:
        waited, unstorable = deferral.apply_waiting(conn, waiting, now=now, actor=actor)
        reached.update(waited)
        results = [r for r in results if r.kind not in deferral.KINDS] + unstorable
        if not results:
            _after_apply(conn, everything, reached, now, actor)
            return reached
    # Only a failed try needs its DAG (retries, retry delay): a batch of successes reads none.
    hashes = (dag_repo.get_hashes(conn, {r.dag_id for r in results
                                         if r.kind not in _NEEDS_NO_DAG})
              if any(r.kind not in _NEEDS_NO_DAG for r in results) else {})
    # (to, name, message, next_retry_at) → fenced pairs
    groups: dict[tuple[TaskInstanceState, StateName | None, str | None, datetime | None],
                 list[tuple[int, int]]] = defaultdict(list)
    by_id = {r.ti_id: r for r in results}
    versions: dict[int, int | None] = {}
    for r in results:
        target, name, message, next_retry = _target(r, views, hashes, conn, now)
        groups[(target, name, message, next_retry)].append((r.ti_id, r.try_number))
    for (target, name, message, next_retry), pairs in groups.items():
        values: dict[str, Any] = ({"next_retry_at": next_retry} if next_retry is not None
                                  else {})
        # The try ends: a retry starts afresh (not from a resume method or a reschedule).
        values.update(next_method=None, next_kwargs=None, trigger_timeout=None,
                      first_poke_at=None, poke_count=0, reschedule_date=None)
        res = door.set_task_instance_state(
            conn, [], fenced=pairs, frm=TI.RUNNING, to=target, actor=actor, now=now, name=name,
            message=message, values=values)
        for pk in res.changed:
            reached[pk] = target
        versions.update(res.versions)
    done = [by_id[pk] for pk in reached if pk in by_id]
    xcom_repo.set_return_values(
        conn,
        [(r.dag_run_id, r.task_id, r.map_index, r.return_value) for r in done
         if reached[r.ti_id] is TI.SUCCESS and r.return_value is not None],
        now,
    )
    _apply_skips(conn, [r for r in done if reached[r.ti_id] is TI.SUCCESS and r.skip_task_ids],
                 now, actor)
    # Each history row records the DAG version its try ran: the workload's, else what the
    # state change read of the row (``versions``), not read again.
    ti_repo.add_history(conn, [_history_row(r, reached[r.ti_id], now, versions.get(r.ti_id))
                               for r in done])
    record_try_outlets(conn, done, reached, now)  # asset events, with the state change
    _after_apply(conn, everything, reached, now, actor)
    return reached


def _after_apply(conn: Connection, results: Sequence[TryResult],
                 reached: dict[int, TaskInstanceState], now: datetime, actor: Actor) -> None:
    """Cleared or cancelled tries that reported anyway end their stop (restarting -> none,
    shutdown -> failed); results are cached; hook errors and notes go to the history."""
    from statewright.services.controls.stopped import settle_stopped_tries
    from statewright.services.secrets.masks import store_masks
    from statewright.services.worker import caching, callbacks

    lost = [(r.ti_id, r.try_number) for r in results if r.ti_id not in reached]
    if lost:
        settle_stopped_tries(conn, lost, now=now, actor=actor, why="reported its end after that")
    # What the tries pushed (ti.xcom_push), kept whatever the outcome, as Airflow writes them
    # when pushed; a try whose outcome was not applied (it lost its task instance) keeps none.
    xcom_repo.set_values(conn, [
        (r.dag_run_id, r.task_id, r.map_index, key, value) for r in results
        if r.ti_id in reached
        for key, value in ((r.extra or {}).get("xcoms") or {}).items()], now)
    ti_repo.set_rendered_map_indexes(conn, {
        r.ti_id: str(r.extra["rendered_map_index"]) for r in results
        if r.ti_id in reached and (r.extra or {}).get("rendered_map_index")})
    caching.store_results(conn, results, reached, now)
    record_rendered_fields(conn, [r for r in results if r.ti_id in reached], now)
    callbacks.record_reports(conn, results, reached, now=now, actor=actor)
    store_masks(conn, results, now=now)


def _target(r: TryResult, views: DagViewCache, hashes: dict[str, str], conn: Connection,
            now: datetime) -> tuple[TaskInstanceState, StateName | None, str | None,
                                    datetime | None]:
    if r.kind in (SUCCESS, CACHED):
        return TI.SUCCESS, (StateName.CACHED if r.kind == CACHED else None), None, None
    if r.kind == SKIPPED:
        return TI.SKIPPED, None, r.error, None
    name = _NAMES.get(r.kind)
    if r.kind == FAIL_NO_RETRY:
        return TI.FAILED, name, r.error, None
    task = None
    if r.dag_id in hashes:
        view = views.get(r.dag_id, hashes[r.dag_id],
                         lambda: dag_repo.get_serialized(conn, r.dag_id))
        task = view.tasks.get(r.task_id)
    retries = task.retries if task else 0
    row = ti_repo.get(conn, r.ti_id)  # a clear raises max_tries: try_number + retries
    max_tries = max(retries, row.max_tries) if row is not None else retries
    if task is None:
        return TI.FAILED, name, r.error, None
    # The task's retry policy (if any) spoke in the task's process; its decision rides along.
    verdict = decide_failure(decision_from_report((r.extra or {}).get(POLICY_EXTRA_KEY)),
                             retries=retries, try_number=r.try_number, max_tries=max_tries,
                             base=task.retry_delay, exponential=task.retry_exponential_backoff,
                             max_delay=task.max_retry_delay)
    message = policy_message(r.error, verdict.reason)
    if verdict.retry and verdict.delay is not None:
        return TI.UP_FOR_RETRY, name, message, now + verdict.delay
    return TI.FAILED, name, message, None


def policy_message(error: str | None, reason: str | None) -> str | None:
    """A failed try's state message: its error, and the retry policy's reason when it gave
    one."""
    if not reason:
        return error
    return f"{error} (retry policy: {reason})" if error else f"retry policy: {reason}"


def _apply_skips(conn: Connection, results: Sequence[TryResult], now: datetime,
                 actor: Actor) -> None:
    for r in results:
        rows = [t for t in ti_repo.by_run(conn, r.dag_run_id) if t.task_id in set(r.skip_task_ids)]
        for state in (TI.NONE, TI.SCHEDULED):
            ids = [t.id for t in rows if t.state == state.value]
            if ids:
                door.set_task_instance_state(
                    conn, ids, frm=state, to=TI.SKIPPED, actor=actor, now=now,
                    message=f"skipped by {r.task_id}")


def _history_row(r: TryResult, state: TaskInstanceState, now: datetime,
                 version: int | None = None) -> dict[str, Any]:
    duration = (now - r.start_date).total_seconds() if r.start_date else None
    return {
        "task_instance_id": r.ti_id,
        "dag_id": r.dag_id,
        "run_id": r.run_id,
        "task_id": r.task_id,
        "map_index": r.map_index,
        "try_number": r.try_number,
        "state": state.value,
        "state_name": (_NAMES.get(r.kind) or _default_name(state)).value,
        "state_message": r.error,
        "hostname": r.hostname,
        "pid": r.pid,
        "start_date": r.start_date,
        "end_date": now,
        "duration": duration,
        "error": r.error,
        "traceback": r.traceback,
        "log_path": r.log_path,
        "dag_version_id": r.dag_version_id if r.dag_version_id is not None else version,
    }


def _default_name(state: TaskInstanceState) -> StateName:
    from statewright.core.states import default_ti_name

    return default_ti_name(state)
