"""Recording asset events: a successful try's outlets (inside the transaction of its state
change), an event posted from outside (API, CLI), and one a watcher's trigger fired."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from statewright.core.errors import StatewrightError
from statewright.db.repositories import asset_events as event_repo
from statewright.db.repositories import assets as asset_repo
from statewright.db.repositories import partitions as partition_repo
from statewright.db.repositories.asset_events import NewAssetEvent


class UnknownAsset(StatewrightError):
    """An event posted for an asset no DAG defines."""


def record_try_outlets(conn: Connection, results: Sequence[Any],
                       reached: Mapping[int, Any], now: datetime) -> list[int]:
    """The asset events of the tries that reached success (in the caller's transaction)."""
    events: list[NewAssetEvent] = []
    resolved: dict[str, list[str]] = {}
    run_keys = partition_repo.run_partition_keys(
        conn, {(r.dag_id, r.run_id) for r in results if (r.extra or {}).get("asset_events")})
    for r in results:
        report = (r.extra or {}).get("asset_events")
        if not report or str(getattr(reached.get(r.ti_id), "value", "")) != "success":
            continue
        source = {"source_dag_id": r.dag_id, "source_run_id": r.run_id,
                  "source_task_id": r.task_id, "source_map_index": r.map_index}
        extras = report.get("extras") or {}
        added = report.get("partitions") or {}
        for ref in report.get("outlets") or []:
            if "asset" in ref:
                definition = ref["asset"]
                name = definition["name"]
                keys = added.get(name) or [run_keys.get((r.dag_id, r.run_id))]
                events.extend(NewAssetEvent(asset=_definition(definition), source="task",
                                            extra=dict(extras.get(name) or {}),
                                            partition_key=key, **source) for key in keys)
        for item in report.get("aliased") or []:
            events.append(NewAssetEvent(asset=_definition(item["asset"]), source="task",
                                        extra=dict(item.get("extra") or {}),
                                        source_alias=item["alias"], **source))
            resolved.setdefault(item["alias"], []).append(item["asset"]["name"])
    if resolved:  # resolve first: consumers scheduled on the alias are queued with the event
        ids = asset_repo.ensure_assets(
            conn, [e.asset for e in events if e.source_alias is not None], now)
        alias_ids = asset_repo.ensure_aliases(conn, resolved)
        for alias, names in resolved.items():
            asset_repo.resolve_alias(conn, alias_ids[alias], [ids[n] for n in names])
    return event_repo.record(conn, events, now)


def _definition(d: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": d["name"], "uri": d.get("uri") or d["name"],
            "group": d.get("group") or "asset", "extra": dict(d.get("extra") or {})}


def emit(conn: Connection, key: str, *, extra: Mapping[str, Any] | None, now: datetime,
         source: str) -> dict[str, Any]:
    """Record an event of a known asset (by name or URI) from outside; returns the event.

    UnknownAsset names the key when no DAG defines such an asset: an event is never recorded
    for a typo."""
    row = asset_repo.get_by_name_or_uri(conn, key)
    if row is None:
        raise UnknownAsset(
            f"no asset has the name or URI {key!r}; `statewright assets list` shows the assets "
            "the DAGs define (an asset is known once a DAG that uses it has been parsed).")
    if extra is not None and not isinstance(extra, Mapping):
        raise ValueError(f"extra must be a JSON object, got {type(extra).__name__}")
    (event_id,) = event_repo.record(conn, [NewAssetEvent(
        asset={"name": row.name, "uri": row.uri, "group": row.group}, source=source,
        extra=dict(extra or {}))], now)
    return {"id": event_id, "asset": {"name": row.name, "uri": row.uri, "group": row.group},
            "extra": dict(extra or {}), "timestamp": now, "source": source}
