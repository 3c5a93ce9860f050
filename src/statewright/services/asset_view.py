"""What people read about assets (API, CLI, web UI): each asset with the DAGs that produce and
consume it, its events, the asset graph, a DAG's pending condition, a run's triggering events."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from statewright.core.asset_conditions import describe_condition
from statewright.db.repositories import asset_events as event_repo
from statewright.db.repositories import asset_watchers as watcher_repo
from statewright.db.repositories import assets as asset_repo
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import runs as run_repo
from statewright.services.scheduler.asset_runs import asset_condition, pending_condition


def list_assets(conn: Connection) -> list[dict[str, Any]]:
    refs = asset_repo.references(conn)
    counts = event_repo.counts_by_asset(conn)
    watchers: dict[str, list[dict[str, Any]]] = {}
    for w in watcher_repo.list_watchers(conn):
        watchers.setdefault(w.asset_name, []).append({
            "name": w.name, "classpath": w.classpath, "active": bool(w.active),
            "triggerer_id": w.triggerer_id, "failures": int(w.failures or 0),
            "last_error": w.last_error, "next_attempt_at": w.next_attempt_at,
            "events": int(w.events or 0)})
    aliases = asset_repo.aliases_with_assets(conn)
    out = []
    for row in asset_repo.list_assets(conn):
        mine = [r for r in refs if r.asset_name == row.name]
        via = {a for a, names in aliases.items() if row.name in names}
        mine += [r for r in refs if r.alias_name in via]
        n, last = counts.get(row.name, (0, None))
        out.append({
            "id": row.id, "name": row.name, "uri": row.uri, "group": row.group,
            "extra": dict(row.extra or {}), "created_at": row.created_at,
            "updated_at": row.updated_at,
            "producing_tasks": sorted({(r.dag_id, r.task_id) for r in mine if r.kind == "outlet"}),
            "consuming_dags": sorted({r.dag_id for r in mine if r.kind == "schedule"}),
            "aliases": sorted(via), "events": n, "last_event_at": last,
            "watchers": watchers.get(row.name, []),
        })
    return out


def graph(conn: Connection) -> dict[str, Any]:
    """Nodes (DAGs, assets, aliases) and edges producer DAG → asset → consumer DAG."""
    nodes: dict[str, dict[str, Any]] = {}
    edges: set[tuple[str, str]] = set()
    aliases = asset_repo.aliases_with_assets(conn)
    for r in asset_repo.references(conn):
        if r.kind == "inlet":
            continue
        dag_key = f"dag:{r.dag_id}"
        nodes[dag_key] = {"id": dag_key, "type": "dag", "label": r.dag_id}
        target = (f"asset:{r.asset_name}" if r.asset_name else f"alias:{r.alias_name}")
        nodes[target] = {"id": target, "type": "asset" if r.asset_name else "alias",
                         "label": r.asset_name or r.alias_name}
        edges.add((dag_key, target) if r.kind == "outlet" else (target, dag_key))
    for alias, names in aliases.items():
        key = f"alias:{alias}"
        if key not in nodes:
            continue
        for name in names:
            nodes.setdefault(f"asset:{name}", {"id": f"asset:{name}", "type": "asset",
                                               "label": name})
            edges.add((key, f"asset:{name}"))
    return {"nodes": sorted(nodes.values(), key=lambda n: n["id"]),
            "edges": [{"source": s, "target": t} for s, t in sorted(edges)]}


def dag_assets(conn: Connection, dag_id: str) -> dict[str, Any] | None:
    """A DAG's asset condition and what it has / still waits for; None: unknown DAG."""
    row = dag_repo.get_dag(conn, dag_id)
    if row is None:
        return None
    condition = asset_condition(row.serialized)
    return {
        "dag_id": dag_id,
        "condition": condition,
        "summary": describe_condition(condition) if condition else None,
        "pending": pending_condition(conn, dag_id, row.serialized),
        "queued_events": sorted(event_repo.queued_asset_names(conn, dag_id)),
        "references": [{"kind": r.kind, "task_id": r.task_id, "asset": r.asset_name,
                        "alias": r.alias_name} for r in asset_repo.references(conn, dag_id=dag_id)],
    }


def run_triggering_events(conn: Connection, dag_id: str, run_id: str
                          ) -> list[dict[str, Any]] | None:
    """The events an asset-triggered run consumed; None: no such run."""
    run = run_repo.get_by_run_id(conn, dag_id, run_id)
    if run is None:
        return None
    return event_repo.triggering_events(conn, [run.id]).get(run.id, [])
