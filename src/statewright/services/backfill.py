"""Backfills: runs of a DAG for every logical date of a past date range (Airflow 3's backfill).

``create_backfill`` validates the request and records the backfill with one row per logical
date that the DAG's schedule gives in ``[from_date, to_date]`` (``Timetable.iter_between``). For
each date:

- no run yet: a run of type ``backfill``, id ``backfill__<logical date>``, is to be created;
- a queued, running or paused run: left alone ("in flight"), whatever the reprocess behavior;
- a finished run: left alone with ``none``; cleared (run again) with ``failed`` when it failed
  (or was cancelled), and with ``completed`` when it failed or succeeded. ``failed`` clears
  only the failed task instances, ``completed`` all of them (Airflow's ``only_failed``).

The scheduler's ``BackfillProgress`` step then creates (or clears) the runs in order, oldest
first (newest first with ``run_backwards``), keeping at most the backfill's ``max_active_runs``
of them queued or running at a time; the DAG's own ``max_active_runs`` still applies when
they start. A backfill is complete when every date has been handled and none of its runs is
unfinished.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from statewright.core.errors import DagDefinitionError, StatewrightError
from statewright.core.states import RUN
from statewright.core.timetables import DagRunInfo, run_id_for
from statewright.core.transitions import Actor
from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import backfills as backfill_repo
from statewright.db.repositories import dags as dag_repo
from statewright.services.dag_runs import RunSpec, create_runs
from statewright.services.dag_view import DagView, DagViewCache
from statewright.services.scheduler.dag_schedule import schedule_spec

if TYPE_CHECKING:
    from statewright.services.scheduler.scheduler import Scheduler

log = logging.getLogger("statewright.backfill")

REPROCESS_BEHAVIORS = ("none", "failed", "completed")
_UNFINISHED = frozenset({RUN.QUEUED.value, RUN.RUNNING.value, RUN.PAUSED.value})
_FAILED = frozenset({RUN.FAILED.value, RUN.CANCELLED.value})
_FINISHED = frozenset({RUN.SUCCESS.value, RUN.FAILED.value, RUN.CANCELLED.value})


class BackfillError(StatewrightError):
    pass


class BackfillNotFound(BackfillError):
    """The backfill, or the DAG a new backfill names, does not exist."""


@dataclass(frozen=True)
class BackfillDate:
    info: DagRunInfo
    action: str  # "create" | "reprocess" | "skip"
    reason: str | None = None  # why it is skipped
    existing_run_id: str | None = None
    existing_run_pk: int | None = None


@dataclass
class BackfillPlan:
    dag_id: str
    from_date: datetime
    to_date: datetime
    reprocess_behavior: str
    max_active_runs: int
    run_backwards: bool
    dates: list[BackfillDate] = field(default_factory=list)
    backfill_id: int | None = None
    paused: bool = False

    @property
    def to_run(self) -> list[BackfillDate]:
        return [d for d in self.dates if d.action != "skip"]


def _reason_or_action(run: Any, behavior: str) -> tuple[str, str | None]:
    if run is None:
        return "create", None
    if run.state in _UNFINISHED:
        return "skip", "in flight: a run of this date is queued or running"
    if behavior == "completed" or (behavior == "failed" and run.state in _FAILED):
        return "reprocess", None
    return "skip", f"a run of this date exists ({run.state})"


def partition_range(conn: Any, dag_id: str, first: str, last: str) -> tuple[datetime, datetime]:
    """The logical dates of a range of partition keys of ``dag_id`` (a CronPartitionTimetable
    DAG); BackfillError naming a key that does not match its timetable."""
    row = dag_repo.get_dag(conn, dag_id)
    if row is None:
        raise BackfillError(f"No DAG with id {dag_id!r} is known. Nothing was created.")
    timetable = schedule_spec(row.serialized).timetable
    check = getattr(timetable, "check_key", None)
    if check is None:
        raise BackfillError(
            f"DAG {dag_id!r} has schedule {timetable.summary!r}, whose runs have no partition "
            "keys: backfill it by --from-date/--to-date. Nothing was created.")
    try:
        return check(first), check(last)
    except DagDefinitionError as exc:
        raise BackfillError(f"{exc}. Nothing was created.") from None


def plan_backfill(conn: Any, dag_id: str, from_date: datetime, to_date: datetime, *,
                  reprocess_behavior: str = "none", max_active_runs: int = 10,
                  run_backwards: bool = False, now: datetime) -> BackfillPlan:
    """What a backfill would do; ``BackfillError`` with a clear sentence when it cannot run."""
    if reprocess_behavior not in REPROCESS_BEHAVIORS:
        raise BackfillError(f"reprocess behavior {reprocess_behavior!r} is not one of "
                            f"{', '.join(REPROCESS_BEHAVIORS)}.")
    if max_active_runs < 1:
        raise BackfillError(f"--max-active-runs must be at least 1, got {max_active_runs}.")
    for name, value in (("start", from_date), ("end", to_date)):
        if value.tzinfo is None:
            raise BackfillError(f"the backfill {name} date {value.isoformat()} has no time zone.")
    if to_date < from_date:
        raise BackfillError(
            f"the end date {to_date.isoformat()} is before the start date "
            f"{from_date.isoformat()}; swap them or pick another range. Nothing was created.")
    if from_date > now:
        raise BackfillError(
            f"the start date {from_date.isoformat()} is in the future; a backfill runs past "
            "dates only. Nothing was created.")
    row = dag_repo.get_dag(conn, dag_id)
    if row is None or not row.is_active:
        raise BackfillNotFound(
            f"No DAG with id {dag_id!r} is known. Run `statewright dags list` to see the DAGs "
            "found in the DAGs folder, and `statewright dags errors` for files that failed to "
            "import. Nothing was created.")
    try:
        spec = schedule_spec(row.serialized)
    except DagDefinitionError as exc:
        raise BackfillError(f"DAG {dag_id!r} has a schedule that cannot be read: {exc}") \
            from None
    if not spec.timetable.periodic:
        raise BackfillError(
            f"DAG {dag_id!r} has schedule {spec.timetable.summary!r}: a backfill needs a "
            "time-based schedule (a cron expression, a preset such as '@daily', or a "
            "timedelta). Trigger single runs with `statewright dags trigger` instead.")
    view = DagView(row.serialized, row.dag_hash)
    if run_backwards and any(t.depends_on_past for t in view.tasks.values()):
        raise BackfillError(
            f"DAG {dag_id!r} has tasks with depends_on_past=True, which cannot run backwards: "
            "drop --run-backwards.")
    infos = [i for i in spec.timetable.iter_between(from_date, to_date) if i.run_after <= now]
    if not infos:
        raise BackfillError(
            f"DAG {dag_id!r} has no scheduled time ({spec.timetable.summary}) between "
            f"{from_date.isoformat()} and {to_date.isoformat()}; widen the range. Nothing was "
            "created.")
    if run_backwards:
        infos.reverse()
    existing = backfill_repo.runs_at(conn, dag_id, [i.logical_date for i in infos])
    plan = BackfillPlan(dag_id, from_date, to_date, reprocess_behavior, max_active_runs,
                        run_backwards, paused=bool(row.is_paused))
    for info in infos:
        run = existing.get(info.logical_date)
        action, reason = _reason_or_action(run, reprocess_behavior)
        plan.dates.append(BackfillDate(info, action, reason,
                                       run.run_id if run is not None else None,
                                       run.id if run is not None else None))
    return plan


def create_backfill(engine: Engine, dag_id: str, from_date: datetime, to_date: datetime, *,
                    reprocess_behavior: str = "none", max_active_runs: int = 10,
                    run_backwards: bool = False, dag_run_conf: Mapping[str, Any] | None = None,
                    dry_run: bool = False, now: datetime) -> BackfillPlan:
    """Plan the backfill and, unless ``dry_run``, record it for the scheduler to carry out."""
    with transaction(engine) as conn:
        plan = plan_backfill(conn, dag_id, from_date, to_date,
                             reprocess_behavior=reprocess_behavior,
                             max_active_runs=max_active_runs, run_backwards=run_backwards,
                             now=now)
        if dry_run:
            return plan
        plan.backfill_id = backfill_repo.create(
            conn, dag_id=dag_id, from_date=from_date, to_date=to_date,
            run_backwards=run_backwards, dag_run_conf=dag_run_conf,
            reprocess_behavior=reprocess_behavior, max_active_runs=max_active_runs, now=now,
            rows=[{
                "logical_date": d.info.logical_date,
                "data_interval_start": d.info.data_interval_start,
                "data_interval_end": d.info.data_interval_end,
                "run_after": d.info.run_after,
                "dag_run_id": d.existing_run_pk,
                "exception_reason": (backfill_repo.PENDING_REPROCESS if d.action == "reprocess"
                                     else _short(d.reason)),
            } for d in plan.dates])
    return plan


def _short(reason: str | None) -> str | None:
    if reason is None:
        return None
    return "in_flight" if reason.startswith("in flight") else "already_exists"


# -- operating a backfill: pause, unpause, cancel (the CLI, the API and the UI) ----------------


def _existing(conn: Any, backfill_id: int) -> Any:
    row = backfill_repo.get(conn, backfill_id)
    if row is None:
        raise BackfillNotFound(f"No backfill with id {backfill_id}; list them with "
                               "GET /api/v1/backfills.")
    return row


def _unfinished(conn: Any, backfill_id: int, doing: str) -> Any:
    row = _existing(conn, backfill_id)
    if row.completed_at is not None:
        raise BackfillError(f"Backfill {backfill_id} of {row.dag_id} is completed: it cannot be "
                            f"{doing}. Nothing was changed.")
    return row


def set_backfill_paused(engine: Engine, backfill_id: int, paused: bool, *,
                        now: datetime) -> Any:
    """Pause (no new run of it is created or cleared; the runs it already made, at most its
    max_active_runs, go on) or unpause a backfill; returns its row."""
    with transaction(engine) as conn:
        _unfinished(conn, backfill_id, "paused" if paused else "unpaused")
        backfill_repo.set_paused(conn, backfill_id, paused, now)
        return backfill_repo.get(conn, backfill_id)


def cancel_backfill(engine: Engine, backfill_id: int, *, actor: Any = Actor.USER,
                    now: datetime) -> Any:
    """Airflow's cancel: pause the backfill, cancel its queued runs (running ones finish), leave
    its dates without a run alone and mark it completed; returns its row."""
    from statewright.services.controls.cancel import cancel_run

    set_backfill_paused(engine, backfill_id, True, now=now)
    with read_snapshot(engine) as conn:
        b = _existing(conn, backfill_id)
        queued = backfill_repo.run_ids_in_state(conn, backfill_id, [RUN.QUEUED.value])
    for run_id in queued:
        try:
            cancel_run(engine, run_id, dag_id=b.dag_id, actor=actor, now=now)
        except StatewrightError as exc:  # started or finished meanwhile: left as it is
            log.info("backfill %d: run %s not cancelled: %s", backfill_id, run_id, exc)
    with transaction(engine) as conn:
        backfill_repo.drop_pending(conn, backfill_id)
        backfill_repo.complete(conn, backfill_id, now)
        return backfill_repo.get(conn, backfill_id)


# -- carrying backfills out (a scheduler step) ------------------------------------------------


def advance_backfills(engine: Engine, now: datetime, *,
                      views: DagViewCache | None = None) -> int:
    """Create or clear the next runs of every unfinished backfill within its max_active_runs,
    and complete the backfills that are done; returns how many things changed."""
    with read_snapshot(engine) as conn:
        open_ = backfill_repo.unfinished(conn)
        if not open_:
            return 0
        ids = [b.id for b in open_]
        active = backfill_repo.active_runs(conn, ids)
        waiting = backfill_repo.count_pending(conn, ids)
        if not any((waiting.get(b.id, 0) and active.get(b.id, 0) < b.max_active_runs)
                   or (not waiting.get(b.id, 0) and not active.get(b.id, 0)) for b in open_):
            return 0
    views = views or DagViewCache()
    changed = 0
    to_clear: list[tuple[Any, Any]] = []
    with transaction(engine) as conn:
        open_ = backfill_repo.unfinished(conn, lock=True)
        active = backfill_repo.active_runs(conn, [b.id for b in open_])
        for b in open_:
            free = b.max_active_runs - active.get(b.id, 0)
            rows = backfill_repo.pending(conn, b.id, free) if free > 0 else []
            if not rows and not active.get(b.id, 0) \
                    and not backfill_repo.count_pending(conn, [b.id]):
                backfill_repo.complete(conn, b.id, now)
                log.info("backfill %d of %s complete", b.id, b.dag_id)
                changed += 1
                continue
            creates = [r for r in rows if r.exception_reason is None]
            to_clear += [(b, r) for r in rows if r.exception_reason is not None]
            changed += _create_runs(conn, b, creates, views, now)
    for b, r in to_clear:
        changed += _reprocess(engine, b, r, now)
    return changed


def _create_runs(conn: Any, b: Any, rows: list[Any], views: DagViewCache,
                 now: datetime) -> int:
    if not rows:
        return 0
    dag = dag_repo.get_dag(conn, b.dag_id)
    if dag is None:
        for r in rows:
            backfill_repo.link(conn, r.id, dag_run_id=None, exception_reason="dag_missing")
        return len(rows)
    view = views.get(b.dag_id, dag.dag_hash, lambda: dag.serialized)
    key_of = getattr(schedule_spec(view.raw).timetable, "partition_key_of", None)
    existing = backfill_repo.runs_at(conn, b.dag_id, [r.logical_date for r in rows])
    fresh = [r for r in rows if r.logical_date not in existing]
    for r in rows:
        if r.logical_date in existing:  # created meanwhile by someone else
            backfill_repo.link(conn, r.id, dag_run_id=existing[r.logical_date].id,
                               exception_reason="already_exists")
    pks = create_runs(conn, [
        RunSpec(view=view, run_id=run_id_for("backfill", r.logical_date), run_type="backfill",
                logical_date=r.logical_date,
                data_interval=(r.data_interval_start, r.data_interval_end),
                run_after=r.run_after, conf=b.dag_run_conf, triggered_by="backfill",
                partition_key=None if key_of is None else key_of(r.logical_date),
                partition_date=None if key_of is None else r.logical_date)
        for r in fresh
    ], now=now, actor=Actor.SCHEDULER)
    for r, pk in zip(fresh, pks, strict=True):
        backfill_repo.link(conn, r.id, dag_run_id=pk)
    return len(rows)


def _reprocess(engine: Engine, b: Any, row: Any, now: datetime) -> int:
    """Clear a finished run of the range (the user asked for it with the reprocess behavior)."""
    from statewright.services.controls.clear import clear_task_instances

    with transaction(engine) as conn:
        run = backfill_repo.runs_at(conn, b.dag_id, [row.logical_date]).get(row.logical_date)
        if run is None or run.state not in _FINISHED:
            backfill_repo.link(conn, row.id, dag_run_id=run.id if run else None,
                               exception_reason="in_flight" if run is not None
                               else "run_missing")
            return 1
    reason: str | None = None
    try:
        clear_task_instances(engine, run.run_id, dag_id=b.dag_id,
                             only_failed=b.reprocess_behavior == "failed",
                             actor=Actor.USER, now=now)
    except StatewrightError as exc:
        log.warning("backfill %d: run %s of %s not cleared: %s", b.id, run.run_id, b.dag_id, exc)
        reason = "not_cleared"
    with transaction(engine) as conn:
        backfill_repo.link(conn, row.id, dag_run_id=run.id, exception_reason=reason)
    return 1


class BackfillProgress:
    """The scheduler step (``Scheduler(extra_steps=[BackfillProgress()])``)."""

    def __call__(self, scheduler: Scheduler, now: datetime) -> int:
        return advance_backfills(scheduler.engine, now, views=scheduler.views)

    due_moves_with_now = True  # ``due_probe``: its query is built once

    def due(self, now: datetime) -> Any:
        """A backfill is unfinished (read in the scheduler pass's probe)."""
        return backfill_repo.unfinished_query()
