"""Which partitioned runs a consumer DAG gets from its queued asset events (a pure decision).

Each queued event carries the partition key its producer wrote. The event's asset's mapper
turns it into downstream key(s); a downstream key gets a run when the DAG's asset condition
holds over the assets with events for that key and, for a rollup, the wait policy is met over
the upstream keys that arrived. An event whose key the mapper cannot read is reported and
dropped; so is one that would fan out to more keys than allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from statewright.core.partitions.mappers import (
    DEFAULT_MAX_DOWNSTREAM_KEYS,
    IdentityMapper,
    PartitionKeyError,
    PartitionMapper,
    RollupMapper,
    mapper_from_dict,
)

__all__ = ["PartitionConfig", "PartitionEvent", "PartitionPlan", "PartitionRun", "plan_runs"]


@dataclass(frozen=True)
class PartitionEvent:
    event_id: int
    asset_name: str
    partition_key: str | None


@dataclass(frozen=True)
class PartitionRun:
    partition_key: str
    event_ids: tuple[int, ...]


@dataclass
class PartitionPlan:
    runs: list[PartitionRun] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)  # events that never map to a run
    errors: list[str] = field(default_factory=list)  # why, one line each


@dataclass(frozen=True)
class PartitionConfig:
    """A ``PartitionedAssetTimetable``'s mappers: one per asset name, and the default."""

    default: PartitionMapper
    per_asset: Mapping[str, PartitionMapper]

    def mapper_for(self, asset_name: str) -> PartitionMapper:
        return self.per_asset.get(asset_name, self.default)

    def to_dict(self) -> dict[str, Any]:
        return {"default": self.default.to_dict(),
                "per_asset": {k: m.to_dict() for k, m in sorted(self.per_asset.items())}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PartitionConfig:
        default = data.get("default")
        return cls(mapper_from_dict(dict(default)) if default else IdentityMapper(),
                   {k: mapper_from_dict(dict(v)) for k, v in (data.get("per_asset") or {}).items()})


def plan_runs(config: PartitionConfig, events: Sequence[PartitionEvent],
              holds: Callable[[set[str]], bool]) -> PartitionPlan:
    """The runs to create now. ``holds(asset_names)``: the DAG's condition over those assets."""
    plan = PartitionPlan()
    by_key: dict[str, dict[str, list[PartitionEvent]]] = {}
    for event in events:
        if event.partition_key is None:
            plan.dropped.append(event.event_id)
            plan.errors.append(f"event {event.event_id} of {event.asset_name!r} has no "
                               "partition key; a partitioned consumer ignores it")
            continue
        mapper = config.mapper_for(event.asset_name)
        try:
            keys = mapper.downstream_keys(event.partition_key)
        except PartitionKeyError as exc:
            plan.dropped.append(event.event_id)
            plan.errors.append(f"event {event.event_id} of {event.asset_name!r}: {exc}")
            continue
        cap = mapper.max_downstream_keys or DEFAULT_MAX_DOWNSTREAM_KEYS
        if len(keys) > cap:
            plan.dropped.append(event.event_id)
            plan.errors.append(f"event {event.event_id} of {event.asset_name!r}: partition "
                               f"fan-out exceeded ({len(keys)} keys, at most {cap})")
            continue
        for key in keys:
            by_key.setdefault(key, {}).setdefault(event.asset_name, []).append(event)
    for key, per_asset in by_key.items():
        if not holds(set(per_asset)):
            continue
        if not all(_window_ready(config.mapper_for(name), key, evs)
                   for name, evs in per_asset.items()):
            continue
        ids = sorted({e.event_id for evs in per_asset.values() for e in evs})
        plan.runs.append(PartitionRun(key, tuple(ids)))
    plan.runs.sort(key=lambda r: (min(r.event_ids), r.partition_key))
    return plan


def _window_ready(mapper: PartitionMapper, key: str, events: list[PartitionEvent]) -> bool:
    if not isinstance(mapper, RollupMapper):
        return True
    arrived = {e.partition_key for e in events if e.partition_key is not None}
    return mapper.ready(key, arrived)
