"""Assets, asset aliases and which DAGs schedule on, update or read them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from statewright.db.bulk import chunks
from statewright.db.tables import dag
from statewright.db.tables_assets import (
    asset,
    asset_alias,
    asset_alias_asset,
    dag_asset_reference,
)

SCHEDULE, OUTLET, INLET = "schedule", "outlet", "inlet"


@dataclass(frozen=True)
class AssetRef:
    """One reference of a DAG (or one of its tasks) to an asset or an alias."""

    kind: str  # schedule | outlet | inlet
    task_id: str | None
    asset_name: str | None = None
    alias_name: str | None = None


def ensure_assets(conn: Connection, defs: Sequence[Mapping[str, Any]], now: datetime, *,
                  update_definition: bool = False) -> dict[str, int]:
    """name → id of each asset in ``defs`` (dicts of name, uri, group, extra, watchers),
    inserting the missing ones. ``update_definition``: a DAG defines them, so the stored uri,
    group, extra and watchers follow the definition."""
    by_name = {str(d["name"]): d for d in defs}
    if not by_name:
        return {}
    found: dict[str, Any] = {}
    for part in chunks(list(by_name), 500):
        for row in conn.execute(select(asset).where(asset.c.name.in_(part))).all():
            found[row.name] = row
    missing = [n for n in by_name if n not in found]
    if missing:
        conn.execute(insert(asset), [_asset_values(by_name[n], now, new=True) for n in missing])
        for part in chunks(missing, 500):
            for row in conn.execute(select(asset).where(asset.c.name.in_(part))).all():
                found[row.name] = row
    if update_definition:
        for name, d in by_name.items():
            row = found[name]
            values = _asset_values(d, now, new=False)
            if any(getattr(row, k) != v for k, v in values.items() if k != "updated_at"):
                conn.execute(update(asset).where(asset.c.id == row.id).values(values))
    return {name: int(row.id) for name, row in found.items()}


def _asset_values(d: Mapping[str, Any], now: datetime, *, new: bool) -> dict[str, Any]:
    values = {"name": str(d["name"]), "uri": str(d.get("uri") or d["name"]),
              "group": str(d.get("group") or "asset"), "extra": dict(d.get("extra") or {}),
              "watchers": list(d.get("watchers") or []), "updated_at": now}
    if new:
        values["created_at"] = now
    return values


def ensure_aliases(conn: Connection, names: Iterable[str]) -> dict[str, int]:
    wanted = sorted(set(names))
    if not wanted:
        return {}
    found = dict(conn.execute(select(asset_alias.c.name, asset_alias.c.id)
                              .where(asset_alias.c.name.in_(wanted))).all())
    missing = [n for n in wanted if n not in found]
    if missing:
        conn.execute(insert(asset_alias), [{"name": n, "group": "asset"} for n in missing])
        found.update(conn.execute(select(asset_alias.c.name, asset_alias.c.id)
                                  .where(asset_alias.c.name.in_(missing))).all())
    return {str(k): int(v) for k, v in found.items()}


def resolve_alias(conn: Connection, alias_id: int, asset_ids: Iterable[int]) -> None:
    """Remember that the alias resolved to these assets (once each)."""
    ids = set(asset_ids)
    if not ids:
        return
    have = set(conn.execute(select(asset_alias_asset.c.asset_id).where(
        asset_alias_asset.c.alias_id == alias_id)).scalars())
    new = sorted(ids - have)
    if new:
        conn.execute(insert(asset_alias_asset),
                     [{"alias_id": alias_id, "asset_id": a} for a in new])


def alias_resolutions(conn: Connection, alias_names: Iterable[str]) -> dict[str, set[str]]:
    """alias name → names of the assets it has resolved to."""
    names = sorted(set(alias_names))
    out: dict[str, set[str]] = {n: set() for n in names}
    if not names:
        return out
    rows = conn.execute(
        select(asset_alias.c.name, asset.c.name)
        .join(asset_alias_asset, asset_alias_asset.c.alias_id == asset_alias.c.id)
        .join(asset, asset.c.id == asset_alias_asset.c.asset_id)
        .where(asset_alias.c.name.in_(names))).all()
    for alias_name, asset_name in rows:
        out[alias_name].add(asset_name)
    return out


def sync_references_many(conn: Connection, refs_by_dag: Mapping[str, Sequence[AssetRef]],
                         defs: Sequence[Mapping[str, Any]], now: datetime) -> None:
    """Replace what each DAG schedules on, updates and reads; ``defs`` define the assets."""
    every = [r for refs in refs_by_dag.values() for r in refs]
    asset_ids = ensure_assets(conn, defs, now, update_definition=True)
    missing = [{"name": n} for n in dict.fromkeys(
        r.asset_name for r in every if r.asset_name is not None and r.asset_name not in asset_ids)]
    asset_ids.update(ensure_assets(conn, missing, now))
    alias_ids = ensure_aliases(conn, [r.alias_name for r in every if r.alias_name is not None])
    for part in chunks(sorted(refs_by_dag), 500):
        conn.execute(delete(dag_asset_reference).where(dag_asset_reference.c.dag_id.in_(part)))
    rows = [row for dag_id, refs in refs_by_dag.items() for row in {
        (r.kind, r.task_id, r.asset_name, r.alias_name): {
            "dag_id": dag_id, "kind": r.kind, "task_id": r.task_id,
            "asset_id": asset_ids.get(r.asset_name) if r.asset_name else None,
            "alias_id": alias_ids.get(r.alias_name) if r.alias_name else None} for r in refs
    }.values()]
    if rows:
        conn.execute(insert(dag_asset_reference), rows)


def consumers(conn: Connection, asset_ids: Iterable[int]) -> dict[int, set[str]]:
    """asset id → the active, unpaused DAGs scheduled on it (directly or through an alias it
    resolved to)."""
    ids = sorted(set(asset_ids))
    out: dict[int, set[str]] = {i: set() for i in ids}
    ref = dag_asset_reference.c
    live = (dag.c.dag_id == ref.dag_id) & dag.c.is_active.is_(True) & dag.c.is_paused.is_(False)
    for part in chunks(ids, 500):
        direct = select(ref.asset_id, ref.dag_id).join(dag, live).where(
            ref.kind == SCHEDULE, ref.asset_id.in_(part))
        via_alias = (
            select(asset_alias_asset.c.asset_id, ref.dag_id)
            .join(dag_asset_reference, ref.alias_id == asset_alias_asset.c.alias_id)
            .join(dag, live)
            .where(ref.kind == SCHEDULE, asset_alias_asset.c.asset_id.in_(part)))
        for asset_id, dag_id in conn.execute(direct.union(via_alias)).all():
            out[int(asset_id)].add(str(dag_id))
    return out


def get_by_name_or_uri(conn: Connection, key: str) -> Any:
    row = conn.execute(select(asset).where(asset.c.name == key)).first()
    if row is None:
        row = conn.execute(select(asset).where(asset.c.uri == key).order_by(asset.c.id)).first()
    return row


def list_assets(conn: Connection) -> list[Any]:
    return list(conn.execute(select(asset).order_by(asset.c.name)).all())


def references(conn: Connection, *, dag_id: str | None = None) -> list[Any]:
    """Every reference (dag_id, kind, task_id, asset_name, alias_name)."""
    ref = dag_asset_reference.c
    stmt = (select(ref.dag_id, ref.kind, ref.task_id, asset.c.name.label("asset_name"),
                   asset_alias.c.name.label("alias_name"))
            .outerjoin(asset, asset.c.id == ref.asset_id)
            .outerjoin(asset_alias, asset_alias.c.id == ref.alias_id)
            .order_by(ref.dag_id, ref.kind, ref.id))
    if dag_id is not None:
        stmt = stmt.where(ref.dag_id == dag_id)
    return list(conn.execute(stmt).all())


def aliases_with_assets(conn: Connection) -> dict[str, list[str]]:
    names = conn.execute(select(asset_alias.c.name)).scalars().all()
    return {k: sorted(v) for k, v in alias_resolutions(conn, names).items()}


def list_aliases(conn: Connection) -> list[Any]:
    """Every asset alias (id, name, group), by name."""
    return list(conn.execute(select(asset_alias).order_by(asset_alias.c.name)).all())
