"""Asset-triggered runs: the scheduler step that turns queued asset events into runs.

An asset event is queued for every DAG scheduled on its asset, in the transaction that records
it. This step locks the DAGs that have queued events (``FOR UPDATE SKIP LOCKED`` on PostgreSQL,
so two schedulers never handle one DAG at once), evaluates each DAG's asset condition over the
assets with queued events, and for each DAG whose condition holds creates one run of type
``asset_triggered`` (Airflow 3: no logical date; ``run_after`` is the time of the latest
event) and consumes exactly the queued events it read: their queue rows are deleted and the run
records them as its triggering events, in the same transaction. An event queued meanwhile stays
queued for the next run; an event is never consumed twice by one DAG (a unique key says so).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from statewright.core.asset_conditions import alias_names, evaluate, pending
from statewright.core.timetables import run_id_for
from statewright.core.transitions import Actor
from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import asset_events as event_repo
from statewright.db.repositories import assets as asset_repo
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import scheduling as sched_repo
from statewright.services.dag_runs import RunSpec, create_runs
from statewright.services.dag_view import DagView, DagViewCache
from statewright.services.scheduler import partition_runs

if TYPE_CHECKING:
    from statewright.services.scheduler.scheduler import Scheduler

log = logging.getLogger("statewright.scheduler.assets")
ACTOR = Actor.SCHEDULER
RUN_TYPE = "asset_triggered"


def asset_condition(serialized: Any) -> dict[str, Any] | None:
    """The asset condition of a serialized DAG (None: it is not scheduled on assets)."""
    schedule = serialized.get("schedule") if isinstance(serialized, dict) else None
    if isinstance(schedule, dict) and isinstance(schedule.get("assets"), dict):
        return dict(schedule["assets"])
    return None


@dataclass(frozen=True)
class _Ready:
    view: DagView
    events: list[event_repo.QueuedEvent]


class AssetRunCreation:
    """The scheduler step (``Scheduler(extra_steps=[AssetRunCreation()])``)."""

    def __init__(self, *, max_dags_per_loop: int = 1000) -> None:
        self.max_dags_per_loop = max_dags_per_loop
        self.views = DagViewCache()

    def __call__(self, scheduler: Scheduler, now: datetime) -> int:
        return self.create_runs(scheduler.engine, now, views=scheduler.views)

    due_moves_with_now = True  # ``due_probe``: its query is built once

    def due(self, now: datetime) -> Any:
        """Asset events are queued (read in the scheduler pass's probe)."""
        return event_repo.queued_query()

    def create_runs(self, engine: Engine, now: datetime, *,
                    views: DagViewCache | None = None) -> int:
        """Create the runs whose asset condition holds; returns how many."""
        with read_snapshot(engine) as conn:
            if not event_repo.any_queued(conn):
                return 0
        views = views or self.views
        try:
            with transaction(engine) as conn:
                created = self._create(conn, now, views)
        except event_repo.ConsumedElsewhere as exc:  # rolled back: nothing half done
            log.warning("asset-triggered runs not created this loop: %s", exc)
            return 0
        if created:
            log.info("created %d asset-triggered run(s)", created)
        return created

    def _create(self, conn: Any, now: datetime, views: DagViewCache) -> int:
        locked = event_repo.lock_dags_with_queued_events(conn, self.max_dags_per_loop)
        if not locked:
            return 0
        queued = event_repo.queued_events(conn, [r.dag_id for r in locked])
        loaded: dict[str, Any] = {}

        def load(dag_id: str) -> Any:
            if dag_id not in loaded:
                loaded.update(dag_repo.get_serialized_many(conn, [r.dag_id for r in locked]))
            return loaded[dag_id][1]

        ready: list[_Ready] = []
        stale: list[str] = []
        candidates: list[tuple[DagView, dict[str, Any]]] = []
        for row in locked:
            view = views.get(row.dag_id, row.dag_hash, lambda d=row.dag_id: load(d))
            condition = asset_condition(view.raw)
            if condition is None:
                stale.append(row.dag_id)
            else:
                candidates.append((view, condition))
        aliases = asset_repo.alias_resolutions(
            conn, {a for _, c in candidates for a in alias_names(c)})
        planned: list[tuple[RunSpec, list[int]]] = []
        for view, condition in candidates:
            events = queued.get(view.dag_id, [])
            partitions = partition_runs.partition_config(view.raw)
            if partitions is not None:
                planned += partition_runs.plan(conn, view, condition, partitions, events,
                                               aliases)
            elif events and evaluate(condition, {e.asset_name for e in events}, aliases):
                ready.append(_Ready(view, events))
        if stale:
            event_repo.drop_queued(conn, stale)
        planned = partition_runs.unique_ids(conn, planned) if planned else []
        if not ready and not planned:
            return 0
        specs = [*self._specs(conn, ready), *(spec for spec, _ in planned)]
        run_pks = create_runs(conn, specs, now=now, actor=ACTOR)
        consumed = [[e.event_id for e in r.events] for r in ready] + [ids for _, ids in planned]
        event_repo.consume(conn, [(spec.view.dag_id, pk, ids) for spec, pk, ids
                                  in zip(specs, run_pks, consumed, strict=True)])
        return len(run_pks)

    @staticmethod
    def _specs(conn: Any, ready: list[_Ready]) -> list[RunSpec]:
        if not ready:
            return []
        """One run per DAG; a run id taken already (events of one instant) gets the id of its
        latest event appended."""
        afters = [max(e.timestamp for e in r.events) for r in ready]
        ids = [run_id_for(RUN_TYPE, at) for at in afters]
        taken, _ = sched_repo.existing_runs(
            conn, [(r.view.dag_id, i, at) for r, i, at in zip(ready, ids, afters, strict=True)])
        specs = []
        for r, run_id, at in zip(ready, ids, afters, strict=True):
            if (r.view.dag_id, run_id) in taken:
                run_id = f"{run_id}_{max(e.event_id for e in r.events)}"
            specs.append(RunSpec(view=r.view, run_id=run_id, run_type=RUN_TYPE,
                                 logical_date=None, run_after=at, triggered_by="asset"))
        return specs


def pending_condition(conn: Any, dag_id: str, serialized: Any) -> dict[str, Any] | None:
    """What a DAG's asset condition has and still waits for (None: not scheduled on assets)."""
    condition = asset_condition(serialized)
    if condition is None:
        return None
    aliases = asset_repo.alias_resolutions(conn, alias_names(condition))
    return pending(condition, event_repo.queued_asset_names(conn, dag_id), aliases)
