"""What synced DAGs say about assets: the assets and aliases each schedules on, updates and
reads, the assets' definitions (URI, group, extra) and their watchers. One batch of DAGs at a
time, in a few statements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from statewright.core.asset_conditions import alias_names, asset_names
from statewright.db.repositories import asset_events as event_repo
from statewright.db.repositories import asset_watchers as watcher_repo
from statewright.db.repositories import assets as asset_repo
from statewright.db.repositories.assets import AssetRef


def dag_refs(serialized: Mapping[str, Any]) -> tuple[list[AssetRef], dict[str, dict[str, Any]]]:
    """The DAG's references and the asset definitions it carries (name → definition)."""
    refs: list[AssetRef] = []
    defs: dict[str, dict[str, Any]] = {}
    schedule = serialized.get("schedule")
    if isinstance(schedule, Mapping) and isinstance(schedule.get("assets"), Mapping):
        condition = schedule["assets"]
        refs += [AssetRef("schedule", None, asset_name=n) for n in asset_names(condition)]
        refs += [AssetRef("schedule", None, alias_name=n) for n in alias_names(condition)]
        for d in schedule.get("defined") or []:
            defs[d["name"]] = d
    for task in serialized.get("tasks") or []:
        for kind in ("outlet", "inlet"):
            for ref in task.get(f"{kind}s") or []:
                if "asset" in ref:
                    defs.setdefault(ref["asset"]["name"], ref["asset"])
                    refs.append(AssetRef(kind, task["task_id"], asset_name=ref["asset"]["name"]))
                elif "asset_ref" in ref:  # named only: the defining DAG gives its URI
                    refs.append(AssetRef(kind, task["task_id"],
                                         asset_name=ref["asset_ref"]["name"]))
                elif "alias" in ref:
                    refs.append(AssetRef(kind, task["task_id"], alias_name=ref["alias"]))
    return refs, defs


def schedule_summary(serialized: Mapping[str, Any], spec: Any) -> str:
    """What the DAG list shows: ``Asset: a & b`` (``... or 0 1 * * 3``), else the timetable's."""
    schedule = serialized.get("schedule")
    if isinstance(schedule, Mapping) and isinstance(schedule.get("summary"), str):
        text = f"Asset: {schedule['summary']}"
        return text if len(text) <= 200 else text[:199] + "…"
    return str(spec.timetable.summary)


def sync_dag_assets(conn: Connection, dags: Sequence[Mapping[str, Any]], now: datetime) -> None:
    """Rewrite the asset references of these (changed) DAGs; store the watchers they define."""
    if not dags:
        return
    by_dag: dict[str, list[AssetRef]] = {}
    defs: dict[str, dict[str, Any]] = {}
    for ser in dags:
        refs, mine = dag_refs(ser)
        by_dag[str(ser["dag_id"])] = refs
        for name, d in mine.items():
            defs.setdefault(name, d)
    # A DAG no longer scheduled on assets forgets what was queued for it.
    event_repo.drop_queued(conn, [d for d, refs in by_dag.items()
                                  if not any(r.kind == "schedule" for r in refs)])
    asset_repo.sync_references_many(conn, by_dag, list(defs.values()), now)
    # Only definitions that carry watchers speak for them: a DAG that merely schedules on an
    # asset does not stop the watchers another DAG defined on it.
    watched = {name: list(d["watchers"]) for name, d in defs.items() if d.get("watchers")}
    if watched:
        watcher_repo.sync(conn, watched, _encrypt, now)


def _encrypt(kwargs: Any) -> str:
    from statewright.crypto import encrypt_json
    from statewright.services.worker.deferral import current_cipher

    return encrypt_json(current_cipher(), kwargs)
