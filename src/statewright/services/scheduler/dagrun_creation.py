"""Creating scheduled runs: the scheduler step that turns due schedules into queued runs.

As Airflow's ``_create_dag_runs``: the unpaused, active DAGs whose ``next_dagrun_create_after``
has passed and that have fewer queued + running (non-backfill) runs than ``max_active_runs``
(Airflow's ``exceeds_max_non_backfill``) get the run their ``next_dagrun*`` columns describe;
those columns then move on with ``Timetable.next_dagrun_info``. One DAG gets at most one run per
loop. Everything happens in one transaction per batch, with the DAG rows locked
(``FOR UPDATE SKIP LOCKED`` on PostgreSQL), and a run id or logical date that exists already is
never created again: the step can be repeated, and run by several schedulers at once.

Without catchup, a stored next run that has been overtaken (the scheduler was down, the DAG
was paused) is skipped in favour of the latest one due, as ``next_dagrun_info`` would have
chosen it at ``now``.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from statewright.core.timetables import DagRunInfo, run_id_for
from statewright.core.transitions import Actor
from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import scheduling as sched_repo
from statewright.services.dag_runs import RunSpec, create_runs
from statewright.services.dag_view import DagView, DagViewCache
from statewright.services.scheduler.dag_schedule import ScheduleCache, next_fields

if TYPE_CHECKING:
    from statewright.services.scheduler.scheduler import Scheduler

log = logging.getLogger("statewright.scheduler.runs")
ACTOR = Actor.SCHEDULER


@dataclass(frozen=True)
class _Decision:
    dag_id: str
    create: DagRunInfo | None  # the run to create (None: it exists already)
    following: DagRunInfo | None  # what the DAG's next_dagrun* columns become


def decide(stored: DagRunInfo, next_info: Any, *, catchup: bool,
           now: datetime) -> tuple[DagRunInfo, DagRunInfo | None]:
    """(the run to create, the one after it) for a DAG whose stored next run is due.

    ``next_info(last)`` is the DAG's ``Timetable.next_dagrun_info`` at ``now``. Without catchup,
    when the run after the stored one is due already, the stored one was overtaken: the latest
    due run is created instead.
    """
    create = stored
    following = next_info(create)
    if not catchup and following is not None and following.run_after <= now:
        create = following
        following = next_info(create)
    return create, following


def stored_info(row: Any) -> DagRunInfo:
    at = row.next_dagrun
    return DagRunInfo(
        logical_date=at,
        data_interval_start=row.next_dagrun_data_interval_start or at,
        data_interval_end=row.next_dagrun_data_interval_end or at,
        run_after=row.next_dagrun_create_after,
    )


class DagRunCreation:
    """The scheduler step (``Scheduler(extra_steps=[DagRunCreation()])``)."""

    def __init__(self, *, max_dags_per_loop: int = 1000) -> None:
        self.max_dags_per_loop = max_dags_per_loop
        self.schedules = ScheduleCache()
        self.views = DagViewCache()  # when the caller has none of its own
        self._task_rows: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def __call__(self, scheduler: Scheduler, now: datetime) -> int:
        return self.create_due_runs(scheduler.engine, now, views=scheduler.views)

    due_moves_with_now = True  # ``due_probe``: its query is built once

    def due(self, now: datetime) -> Any:
        """A DAG's next run is due (read in the scheduler pass's probe)."""
        return sched_repo.due_dag_query(now)

    def create_due_runs(self, engine: Engine, now: datetime, *,
                        views: DagViewCache | None = None) -> int:
        """Create the due runs of up to ``max_dags_per_loop`` DAGs; returns how many."""
        with read_snapshot(engine) as conn:
            if not sched_repo.any_due_dag(conn, now):
                return 0
        views = views or self.views
        with _collector_paused(), transaction(engine) as conn:
            due = sched_repo.lock_due_dags(conn, now, self.max_dags_per_loop)
            if not due:
                return 0
            loaded: dict[str, tuple[str, dict[str, Any]]] = {}

            def load(dag_id: str) -> dict[str, Any]:
                if dag_id not in loaded:  # one query for every due DAG at the first miss
                    loaded.update(dag_repo.get_serialized_many(conn, [r.dag_id for r in due]))
                return loaded[dag_id][1]

            decisions: list[_Decision] = []
            dag_views: dict[str, DagView] = {}
            for row in due:
                view = views.get(row.dag_id, row.dag_hash, lambda d=row.dag_id: load(d))
                dag_views[row.dag_id] = view
                decision = self._decide(row, view, now)
                if decision is not None:
                    decisions.append(decision)
            wanted = [(d.dag_id, run_id_for("scheduled", d.create.logical_date),
                       d.create.logical_date) for d in decisions if d.create is not None]
            taken_ids, taken_dates = sched_repo.existing_runs(conn, wanted)
            specs: list[RunSpec] = []
            for d in decisions:
                if d.create is None:
                    continue
                run_id = run_id_for("scheduled", d.create.logical_date)
                if ((d.dag_id, run_id) in taken_ids
                        or (d.dag_id, d.create.logical_date) in taken_dates):
                    continue
                specs.append(RunSpec(
                    view=dag_views[d.dag_id], run_id=run_id, run_type="scheduled",
                    logical_date=d.create.logical_date,
                    data_interval=(d.create.data_interval_start, d.create.data_interval_end),
                    run_after=d.create.run_after, triggered_by="timetable",
                    task_rows=self._rows_of(dag_views[d.dag_id]),
                    partition_key=d.create.partition_key,
                    partition_date=d.create.partition_date))
            create_runs(conn, specs, now=now, actor=ACTOR)
            sched_repo.set_next_dagruns(
                conn, {d.dag_id: next_fields(d.following) for d in decisions})
        if specs:
            log.info("created %d scheduled run(s)", len(specs))
        return len(specs)

    def _decide(self, row: Any, view: DagView, now: datetime) -> _Decision | None:
        try:
            spec = self.schedules.spec(row.dag_id, view.dag_hash, view.raw)
        except Exception as exc:  # a stored DAG the processor would reject now
            log.error("DAG %s: cannot read its schedule (%s); no run created", row.dag_id, exc)
            return _Decision(row.dag_id, None, None)
        try:
            create, following = decide(
                stored_info(row), lambda last: self.schedules.next_info(spec, last, now),
                catchup=spec.catchup, now=now)
        except Exception as exc:  # a user's timetable that raises stops only its own DAG
            log.error("DAG %s: its timetable raised (%s); no run created", row.dag_id, exc)
            return _Decision(row.dag_id, None, None)
        key_of = getattr(spec.timetable, "partition_key_of", None)
        if key_of is not None and create.partition_key is None:  # stored rows hold no key
            create = replace(create, partition_key=key_of(create.logical_date),
                             partition_date=create.logical_date)
        return _Decision(row.dag_id, create, following)

    def _rows_of(self, view: DagView) -> list[dict[str, Any]]:
        key = (view.dag_id, view.dag_hash)
        rows = self._task_rows.get(key)
        if rows is None:
            if len(self._task_rows) > 20000:
                self._task_rows.clear()
            rows = self._task_rows[key] = view.task_rows()
        return rows


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while tens of thousands of short-lived rows and events
    are built: reference counting frees them, and a full collection in the middle of the loop
    would walk every object of the process (100 ms and more in a busy scheduler)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def refresh_next_dagrun(conn: Any, dag_ids: list[str], specs: Mapping[str, Any],
                        now: datetime) -> dict[str, dict[str, datetime | None]]:
    """The ``next_dagrun*`` columns of DAGs from their last automated run and ``now``."""
    latest = sched_repo.latest_automated_runs(conn, dag_ids)
    out: dict[str, dict[str, datetime | None]] = {}
    for dag_id in dag_ids:
        spec = specs[dag_id]
        row = latest.get(dag_id)
        last = None if row is None else DagRunInfo(
            logical_date=row.logical_date,
            data_interval_start=row.data_interval_start or row.logical_date,
            data_interval_end=row.data_interval_end or row.logical_date,
            run_after=row.run_after or row.logical_date)
        out[dag_id] = next_fields(spec.next_info(last, now))
    return out
