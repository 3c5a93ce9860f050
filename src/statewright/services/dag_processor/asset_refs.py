"""What a synced DAG says about assets: the assets and aliases it schedules on, updates and
reads, the assets' definitions (URI, group, extra) and their watchers."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from statewright.core.asset_conditions import alias_names, asset_names
from statewright.db.repositories import asset_events as event_repo
from statewright.db.repositories import asset_watchers as watcher_repo
from statewright.db.repositories import assets as asset_repo
from statewright.db.repositories.assets import AssetRef


def sync_dag_assets(conn: Connection, serialized: Mapping[str, Any], now: datetime) -> None:
    """Rewrite the DAG's asset references; store the watchers of the assets it defines."""
    dag_id = str(serialized["dag_id"])
    refs: list[AssetRef] = []
    defs: dict[str, dict[str, Any]] = {}
    schedule = serialized.get("schedule")
    if isinstance(schedule, Mapping) and isinstance(schedule.get("assets"), Mapping):
        condition = schedule["assets"]
        refs += [AssetRef("schedule", None, asset_name=n) for n in asset_names(condition)]
        refs += [AssetRef("schedule", None, alias_name=n) for n in alias_names(condition)]
        for d in schedule.get("defined") or []:
            defs[d["name"]] = d
    else:
        event_repo.drop_queued(conn, [dag_id])  # no longer scheduled on assets
    for task in serialized.get("tasks") or []:
        for kind in ("outlet", "inlet"):
            for ref in task.get(f"{kind}s") or []:
                if "asset" in ref:
                    defs.setdefault(ref["asset"]["name"], ref["asset"])
                    refs.append(AssetRef(kind, task["task_id"], asset_name=ref["asset"]["name"]))
                elif "alias" in ref:
                    refs.append(AssetRef(kind, task["task_id"], alias_name=ref["alias"]))
    if not refs and not defs:
        asset_repo.sync_references(conn, dag_id, [], [], now)
        return
    asset_repo.sync_references(conn, dag_id, refs, list(defs.values()), now)
    # Only definitions that carry watchers speak for them: a DAG that merely schedules on an
    # asset does not stop the watchers another DAG defined on it.
    watched = {name: list(d["watchers"]) for name, d in defs.items() if d.get("watchers")}
    if watched:
        watcher_repo.sync(conn, watched, _encrypt, now)


def _encrypt(kwargs: Any) -> str:
    from statewright.crypto import encrypt_json
    from statewright.services.worker.deferral import current_cipher

    return encrypt_json(current_cipher(), kwargs)
