"""Partitioned asset-triggered runs: one run per downstream partition key that is ready.

Part of the asset step (``AssetRunCreation``), in its transaction and under its DAG locks: for
a DAG scheduled with ``PartitionedAssetTimetable``, its queued events are planned by
``core.partitions.plan_runs``; each ready key gets a run (type ``asset_triggered``, its
``partition_key`` set) that consumes the events it was planned from. Events whose key can never
map to a run are dropped from the DAG's queue with a warning naming the key.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from statewright.core.asset_conditions import evaluate
from statewright.core.partitions import PartitionConfig, PartitionEvent, plan_runs
from statewright.core.timetables import run_id_for
from statewright.db.repositories import asset_events as event_repo
from statewright.db.repositories import partitions as partition_repo
from statewright.db.repositories import scheduling as sched_repo
from statewright.services.dag_runs import RunSpec
from statewright.services.dag_view import DagView

log = logging.getLogger("statewright.scheduler.partitions")
RUN_TYPE = "asset_triggered"


def partition_config(serialized: Any) -> PartitionConfig | None:
    """The partition mappers of a DAG scheduled with PartitionedAssetTimetable (else None)."""
    schedule = serialized.get("schedule") if isinstance(serialized, Mapping) else None
    if isinstance(schedule, Mapping) and isinstance(schedule.get("partitions"), Mapping):
        return PartitionConfig.from_dict(schedule["partitions"])
    return None


def partition_date(key: str) -> datetime | None:
    """The date a key names when it is an ISO date or time (read as UTC when it has no zone)."""
    try:
        moment = datetime.fromisoformat(key)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def plan(conn: Any, view: DagView, condition: dict[str, Any], config: PartitionConfig,
         events: Sequence[event_repo.QueuedEvent],
         aliases: Mapping[str, Any]) -> list[tuple[RunSpec, list[int]]]:
    """The runs to create for one DAG, each with the queued event ids it consumes."""
    by_id = {e.event_id: e for e in events}
    decided = plan_runs(config, [PartitionEvent(e.event_id, e.asset_name, e.partition_key)
                                 for e in events],
                        lambda names: evaluate(condition, names, aliases))
    for error in decided.errors:
        log.warning("DAG %s: %s", view.dag_id, error)
    if decided.dropped:
        partition_repo.drop_queued_events(conn, view.dag_id, decided.dropped)
    out: list[tuple[RunSpec, list[int]]] = []
    consumed: set[int] = set()
    for run in decided.runs:
        at = max(by_id[i].timestamp for i in run.event_ids)
        mine = [i for i in run.event_ids if i not in consumed]  # a fanned-out event: once
        consumed.update(mine)
        out.append((RunSpec(view=view, run_id=f"{run_id_for(RUN_TYPE, at)}__{run.partition_key}",
                            run_type=RUN_TYPE, logical_date=None, run_after=at,
                            triggered_by="asset", partition_key=run.partition_key,
                            partition_date=partition_date(run.partition_key)), mine))
    return out


def unique_ids(conn: Any, planned: list[tuple[RunSpec, list[int]]]
               ) -> list[tuple[RunSpec, list[int]]]:
    """Run ids already taken (a key triggered twice at one instant) get an event id added."""
    taken, _ = sched_repo.existing_runs(
        conn, [(s.view.dag_id, s.run_id, s.run_after) for s, _ in planned])
    out = []
    for spec, ids in planned:
        if (spec.view.dag_id, spec.run_id) in taken:
            spec = RunSpec(**{**spec.__dict__, "run_id": f"{spec.run_id}_{max(ids or [0])}"})
        out.append((spec, ids))
    return out
