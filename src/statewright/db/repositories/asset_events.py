"""Asset events: recording them (with the queue rows of their consumer DAGs), consuming them
into asset-triggered runs, and reading them back."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, delete, func, insert, select, tuple_

from statewright.db.bulk import chunks
from statewright.db.repositories import assets as asset_repo
from statewright.db.repositories import searching
from statewright.db.tables import dag, dag_run
from statewright.db.tables_assets import (
    asset,
    asset_event,
    asset_event_queue,
    dag_run_asset_event,
)

ev = asset_event.c
q = asset_event_queue.c


@dataclass(frozen=True)
class NewAssetEvent:
    """An event to record. ``asset`` is a definition dict (name, uri, group, extra)."""

    asset: dict[str, Any]
    source: str  # task | api | cli | watcher
    extra: dict[str, Any] = field(default_factory=dict)
    source_dag_id: str | None = None
    source_run_id: str | None = None
    source_task_id: str | None = None
    source_map_index: int = -1
    source_alias: str | None = None
    partition_key: str | None = None


def record(conn: Connection, events: Sequence[NewAssetEvent], now: datetime) -> list[int]:
    """Insert the events (creating assets not seen before) and queue each for the DAGs scheduled
    on its asset; returns the events' ids in order. Runs in the caller's transaction."""
    if not events:
        return []
    ids = asset_repo.ensure_assets(conn, [e.asset for e in events], now)
    rows: list[dict[str, Any]] = [{"asset_id": ids[e.asset["name"]], "extra": dict(e.extra),
             "source_dag_id": e.source_dag_id, "source_run_id": e.source_run_id,
             "source_task_id": e.source_task_id, "source_map_index": e.source_map_index,
             "source_alias": e.source_alias, "source": e.source, "timestamp": now,
             "partition_key": e.partition_key}
            for e in events]
    result = conn.execute(insert(asset_event).returning(ev.id, sort_by_parameter_order=True),
                          rows)
    event_ids = [int(i) for i in result.scalars().all()]
    asset_ids: list[int] = [int(r["asset_id"]) for r in rows]
    targets = asset_repo.consumers(conn, asset_ids)
    queue = [{"target_dag_id": dag_id, "asset_event_id": eid, "asset_id": aid,
              "created_at": now}
             for eid, aid in zip(event_ids, asset_ids, strict=True)
             for dag_id in sorted(targets.get(aid, ()))]
    if queue:
        conn.execute(insert(asset_event_queue), queue)
    return event_ids


# -- the scheduler's side ------------------------------------------------------------------------


def any_queued(conn: Connection) -> bool:
    return conn.execute(queued_query().limit(1)).first() is not None


def queued_query() -> Any:
    """The queued asset events' target DAGs (a query for an ``EXISTS``)."""
    return select(q.target_dag_id)


def lock_dags_with_queued_events(conn: Connection, limit: int) -> list[Any]:
    """Active, unpaused DAGs with queued events and below ``max_active_runs`` (oldest event
    first), locked (``FOR UPDATE SKIP LOCKED`` on PostgreSQL): a DAG another scheduler is
    handling is skipped, never handled twice."""
    waiting = (select(q.target_dag_id, func.min(q.asset_event_id).label("first"))
               .group_by(q.target_dag_id).subquery())
    active_runs = (select(func.count()).select_from(dag_run)
                   .where(dag_run.c.dag_id == dag.c.dag_id,
                          dag_run.c.state.in_(("queued", "running")),
                          dag_run.c.run_type != "backfill")
                   .scalar_subquery())
    stmt = (select(dag.c.dag_id, dag.c.dag_hash)
            .join(waiting, waiting.c.target_dag_id == dag.c.dag_id)
            .where(dag.c.is_active.is_(True), dag.c.is_paused.is_(False),
                   active_runs < dag.c.max_active_runs)
            .order_by(waiting.c.first)
            .limit(limit)
            .with_for_update(of=dag, skip_locked=True))
    return list(conn.execute(stmt).all())


@dataclass(frozen=True)
class QueuedEvent:
    event_id: int
    asset_name: str
    timestamp: datetime
    partition_key: str | None = None


def queued_events(conn: Connection, dag_ids: Iterable[str]) -> dict[str, list[QueuedEvent]]:
    """dag id → its queued events, oldest first."""
    out: dict[str, list[QueuedEvent]] = {}
    for part in chunks(sorted(set(dag_ids)), 500):
        rows = conn.execute(
            select(q.target_dag_id, q.asset_event_id, asset.c.name, ev.timestamp,
                   ev.partition_key)
            .join(asset, asset.c.id == q.asset_id)
            .join(asset_event, ev.id == q.asset_event_id)
            .where(q.target_dag_id.in_(part))
            .order_by(q.target_dag_id, q.asset_event_id)).all()
        for dag_id, event_id, name, ts, key in rows:
            out.setdefault(str(dag_id), []).append(QueuedEvent(int(event_id), str(name), ts,
                                                               key))
    return out


class ConsumedElsewhere(Exception):
    """Some queued events were consumed by another scheduler meanwhile."""


def consume(conn: Connection, consumed: Sequence[tuple[str, int, Sequence[int]]]) -> None:
    """(dag id, run key, event ids): delete exactly these queue rows and record that the run
    consumed these events. ConsumedElsewhere when a row was gone (the caller rolls back)."""
    pairs = [(dag_id, eid) for dag_id, _, eids in consumed for eid in eids]
    if not pairs:
        return
    deleted = 0
    for part in chunks(pairs, 400):
        deleted += conn.execute(delete(asset_event_queue).where(
            tuple_(q.target_dag_id, q.asset_event_id).in_(list(part)))).rowcount
    if deleted != len(pairs):
        raise ConsumedElsewhere(f"{len(pairs) - deleted} queued asset event(s) were gone")
    conn.execute(insert(dag_run_asset_event), [
        {"dag_run_id": run_pk, "dag_id": dag_id, "asset_event_id": eid}
        for dag_id, run_pk, eids in consumed for eid in eids])


def drop_queued(conn: Connection, dag_ids: Iterable[str]) -> int:
    """Forget the queued events of DAGs that are no longer scheduled on assets."""
    ids = sorted(set(dag_ids))
    return sum(conn.execute(delete(asset_event_queue).where(q.target_dag_id.in_(part))).rowcount
               for part in chunks(ids, 500))


def _queue_where(dag_id: str | None, asset_id: int | None, before: datetime | None
                 ) -> list[Any]:
    where = []
    if dag_id is not None:
        where.append(q.target_dag_id == dag_id)
    if asset_id is not None:
        where.append(q.asset_id == asset_id)
    if before is not None:
        where.append(q.created_at < before)
    return where


def queued_pairs(conn: Connection, *, dag_id: str | None = None, asset_id: int | None = None,
                 before: datetime | None = None) -> list[Any]:
    """(target_dag_id, asset_id, created_at): each DAG and asset with queued events (the
    oldest one's time), by DAG and asset."""
    return list(conn.execute(
        select(q.target_dag_id, q.asset_id, func.min(q.created_at).label("created_at"))
        .where(*_queue_where(dag_id, asset_id, before))
        .group_by(q.target_dag_id, q.asset_id).order_by(q.target_dag_id, q.asset_id)).all())


def delete_queued(conn: Connection, *, dag_id: str | None = None, asset_id: int | None = None,
                  before: datetime | None = None) -> int:
    """Forget queued events (of a DAG, an asset, before a time): no run is triggered by them."""
    if dag_id is None and asset_id is None:
        raise ValueError("delete_queued needs a DAG or an asset")
    return int(conn.execute(delete(asset_event_queue).where(
        *_queue_where(dag_id, asset_id, before))).rowcount)


# -- reads ------------------------------------------------------------------------------------


def _event_select() -> Any:
    return (select(ev.id, ev.extra, ev.source_dag_id, ev.source_run_id, ev.source_task_id,
                   ev.source_map_index, ev.source_alias, ev.source, ev.timestamp,
                   ev.partition_key, asset.c.name.label("asset_name"),
                   asset.c.uri.label("asset_uri"), asset.c.group.label("asset_group"))
            .join(asset, asset.c.id == ev.asset_id))


def event_data(row: Any) -> dict[str, Any]:
    """An event as plain data (what a task's context and the API get)."""
    return {
        "id": int(row.id),
        "asset": {"name": row.asset_name, "uri": row.asset_uri, "group": row.asset_group},
        "extra": dict(row.extra or {}), "timestamp": row.timestamp,
        "source_dag_id": row.source_dag_id, "source_run_id": row.source_run_id,
        "source_task_id": row.source_task_id, "source_map_index": int(row.source_map_index),
        "source_aliases": [row.source_alias] if row.source_alias else [],
        "source": row.source, "partition_key": row.partition_key,
    }


@dataclass(frozen=True)
class EventFilter:
    """What ``page_events`` keeps: equalities, asset name searches and a time range."""

    asset_name: str | None = None
    source_dag_id: str | None = None
    source_task_id: str | None = None
    source_run_id: str | None = None
    source_map_index: int | None = None
    name_pattern: str | None = None
    name_prefix: str | None = None
    timestamp: searching.Bounds = (None, None, None, None)


_EVENT_ORDER = {"id": ev.id, "timestamp": ev.timestamp, "source_dag_id": ev.source_dag_id,
                "source_task_id": ev.source_task_id, "source_run_id": ev.source_run_id,
                "source_map_index": ev.source_map_index}


def page_events(conn: Connection, f: EventFilter, *, order: list[tuple[str, bool]],
                limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
    """A page of events kept by ``f``, sorted by ``order`` ((name, descending) pairs of
    ``EVENT_ORDER``; then by id), and how many were kept."""
    equal = ((asset.c.name, f.asset_name), (ev.source_dag_id, f.source_dag_id),
             (ev.source_task_id, f.source_task_id), (ev.source_run_id, f.source_run_id),
             (ev.source_map_index, f.source_map_index))
    where = [col == value for col, value in equal if value is not None]
    where += searching.searched(asset.c.name, f.name_pattern, f.name_prefix)
    where += searching.within(ev.timestamp, f.timestamp)
    rows = conn.execute(_event_select().where(*where)
                        .order_by(*searching.ordered(_EVENT_ORDER, order), ev.id)
                        .limit(limit).offset(offset)).all()
    total = conn.execute(select(func.count()).select_from(asset_event)
                         .join(asset, asset.c.id == ev.asset_id).where(*where)).scalar_one()
    return [event_data(r) for r in rows], int(total)


EVENT_ORDER = frozenset(_EVENT_ORDER)


def list_events(conn: Connection, *, asset_name: str | None = None,
                source_dag_id: str | None = None, limit: int = 100,
                after_id: int | None = None) -> list[dict[str, Any]]:
    """Newest first."""
    stmt = _event_select()
    if asset_name is not None:
        stmt = stmt.where(asset.c.name == asset_name)
    if source_dag_id is not None:
        stmt = stmt.where(ev.source_dag_id == source_dag_id)
    if after_id is not None:
        stmt = stmt.where(ev.id > after_id)
    rows = conn.execute(stmt.order_by(ev.id.desc()).limit(limit)).all()
    return [event_data(r) for r in rows]


def triggering_events(conn: Connection, run_pks: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
    """run key → the events it consumed (oldest first)."""
    out: dict[int, list[dict[str, Any]]] = {}
    for part in chunks(sorted(set(run_pks)), 500):
        rows = conn.execute(
            _event_select().add_columns(dag_run_asset_event.c.dag_run_id)
            .join(dag_run_asset_event, dag_run_asset_event.c.asset_event_id == ev.id)
            .where(dag_run_asset_event.c.dag_run_id.in_(part))
            .order_by(ev.timestamp, ev.id)).all()
        for r in rows:
            out.setdefault(int(r.dag_run_id), []).append(event_data(r))
    return out


def recent_events_of(conn: Connection, asset_names: Iterable[str], alias_names: Iterable[str],
                     limit: int = 100) -> list[dict[str, Any]]:
    """The latest ``limit`` events of each asset / emitted through each alias (for inlets)."""
    out: list[dict[str, Any]] = []
    for name in sorted(set(asset_names)):
        out += [event_data(r) for r in conn.execute(
            _event_select().where(asset.c.name == name).order_by(ev.id.desc()).limit(limit))]
    for alias in sorted(set(alias_names)):
        out += [event_data(r) for r in conn.execute(
            _event_select().where(ev.source_alias == alias).order_by(ev.id.desc()).limit(limit))]
    return out


def queued_asset_names(conn: Connection, dag_id: str) -> set[str]:
    """The assets with events queued for ``dag_id`` (what its condition has already)."""
    return set(conn.execute(
        select(asset.c.name).distinct().join(asset_event_queue, q.asset_id == asset.c.id)
        .where(q.target_dag_id == dag_id)).scalars())


def counts_by_asset(conn: Connection) -> dict[str, tuple[int, datetime | None]]:
    """asset name → (number of events, time of the latest)."""
    rows = conn.execute(select(asset.c.name, func.count(ev.id), func.max(ev.timestamp))
                        .outerjoin(asset_event, and_(ev.asset_id == asset.c.id))
                        .group_by(asset.c.name)).all()
    return {str(n): (int(c), t) for n, c, t in rows}
