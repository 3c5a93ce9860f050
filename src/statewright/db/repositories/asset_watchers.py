"""The watchers of assets: which triggerer runs each, its failures and back-off."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, insert, or_, select, update

from statewright.db.repositories import assets as asset_repo
from statewright.db.tables_assets import asset, asset_watcher

w = asset_watcher.c


def sync(conn: Connection, by_asset: Mapping[str, Sequence[Mapping[str, Any]]],
         encrypt: Callable[[Any], str], now: datetime) -> None:
    """For each asset named, its watchers become exactly these (others are deactivated). The
    DAG that defines them changed, so each starts afresh: no failures, not claimed (the
    triggerer running it stops it and one claims it again with the new arguments)."""
    ids = asset_repo.ensure_assets(conn, [{"name": n} for n in by_asset], now)
    for name, watchers in by_asset.items():
        asset_id = ids[name]
        existing = {r.name: r for r in conn.execute(
            select(asset_watcher).where(w.asset_id == asset_id)).all()}
        wanted = {str(x["name"]): x for x in watchers}
        for wname, x in wanted.items():
            row = existing.get(wname)
            kwargs = encrypt(x.get("kwargs") or {})
            if row is None:
                conn.execute(insert(asset_watcher).values(
                    asset_id=asset_id, name=wname, classpath=x["classpath"], kwargs=kwargs,
                    active=True, failures=0, events=0, updated_at=now))
            else:
                conn.execute(update(asset_watcher).where(w.id == row.id).values(
                    classpath=x["classpath"], kwargs=kwargs, active=True, failures=0,
                    last_error=None, next_attempt_at=None, triggerer_id=None, updated_at=now))
        gone = [r.id for n, r in existing.items() if n not in wanted and r.active]
        if gone:
            conn.execute(update(asset_watcher).where(w.id.in_(gone)).values(
                active=False, triggerer_id=None, updated_at=now))


def _free(alive: Collection[int]) -> Any:
    return or_(w.triggerer_id.is_(None), w.triggerer_id.not_in(list(alive) or [-1]))


def any_claimable(conn: Connection, alive: Collection[int]) -> bool:
    return conn.execute(select(w.id).where(w.active.is_(True), _free(alive)).limit(1)
                        ).first() is not None


def claim(conn: Connection, triggerer_id: int, alive: Collection[int], limit: int) -> list[Any]:
    """Active watchers no live triggerer runs, now this triggerer's (``SKIP LOCKED``)."""
    rows = list(conn.execute(
        select(asset_watcher.c.id).where(w.active.is_(True), _free(alive))
        .order_by(w.id).limit(limit).with_for_update(skip_locked=True)).scalars())
    if not rows:
        return []
    conn.execute(update(asset_watcher).where(w.id.in_(rows)).values(triggerer_id=triggerer_id))
    return mine(conn, triggerer_id, only=rows)


def mine(conn: Connection, triggerer_id: int, only: Collection[int] | None = None) -> list[Any]:
    stmt = (select(asset_watcher, asset.c.name.label("asset_name"), asset.c.uri.label("asset_uri"),
                   asset.c.group.label("asset_group"))
            .join(asset, asset.c.id == w.asset_id)
            .where(w.active.is_(True), w.triggerer_id == triggerer_id))
    if only is not None:
        stmt = stmt.where(w.id.in_(list(only)))
    return list(conn.execute(stmt).all())


def record_failure(conn: Connection, watcher_id: int, error: str, retry_at: datetime,
                   now: datetime) -> None:
    conn.execute(update(asset_watcher).where(w.id == watcher_id).values(
        failures=w.failures + 1, last_error=error, next_attempt_at=retry_at, updated_at=now))


def record_events(conn: Connection, counts: Mapping[int, int], now: datetime) -> None:
    for watcher_id, n in counts.items():
        conn.execute(update(asset_watcher).where(w.id == watcher_id).values(
            events=w.events + n, failures=0, next_attempt_at=None, updated_at=now))


def release(conn: Connection, triggerer_id: int) -> int:
    return conn.execute(update(asset_watcher).where(w.triggerer_id == triggerer_id)
                        .values(triggerer_id=None)).rowcount


def list_watchers(conn: Connection) -> list[Any]:
    return list(conn.execute(
        select(w.id, w.name, w.classpath, w.active, w.triggerer_id, w.failures, w.last_error,
               w.next_attempt_at, w.events, asset.c.name.label("asset_name"))
        .join(asset, and_(asset.c.id == w.asset_id)).order_by(asset.c.name, w.name)).all())
