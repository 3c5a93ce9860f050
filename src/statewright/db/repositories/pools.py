"""Pools: named sets of slots that task instances take while queued or running."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from statewright.core.states import TI
from statewright.db.tables import pool, task_instance

DEFAULT_POOL = "default_pool"
DEFAULT_POOL_SLOTS = 128

ti = task_instance.c
_COUNTED = (TI.SCHEDULED.value, TI.QUEUED.value, TI.RUNNING.value, TI.DEFERRED.value)


@dataclass
class PoolStats:
    """Airflow's ``Pool.slots_stats`` for one pool: slots by the state of the task instances."""

    name: str
    slots: int
    description: str | None
    include_deferred: bool
    running: int = 0
    queued: int = 0
    deferred: int = 0
    scheduled: int = 0

    @property
    def occupied(self) -> int:
        return self.running + self.queued + (self.deferred if self.include_deferred else 0)

    @property
    def open(self) -> int:
        return self.slots - self.occupied


def ensure_default(conn: Connection, slots: int = DEFAULT_POOL_SLOTS) -> bool:
    """Create ``default_pool`` when it is missing; True when it was created. Safe when several
    schedulers start at once: the insert does nothing when another one created it meanwhile."""
    if conn.execute(select(pool.c.name).where(pool.c.name == DEFAULT_POOL)).first() is not None:
        return False
    dialect_insert = postgresql_insert if conn.dialect.name == "postgresql" else sqlite_insert
    created = conn.execute(dialect_insert(pool).values(
        name=DEFAULT_POOL, slots=slots, description="Default pool", include_deferred=False,
    ).on_conflict_do_nothing(index_elements=[pool.c.name]).returning(pool.c.name)).first()
    return created is not None


def get(conn: Connection, name: str) -> Any:
    return conn.execute(select(pool).where(pool.c.name == name)).first()


_LIST_ALL = select(pool).order_by(pool.c.name)
# The pool rows with the rest of the transaction's reads through indexes (``set_config`` of
# each row: the same for all): one round trip for the lock, the settings and the pools.
_LOCK_ALL = (select(pool, func.set_config("enable_seqscan", "off", True),
                    func.set_config("enable_bitmapscan", "off", True))
             .order_by(pool.c.name).with_for_update(of=pool))
_TRY_LOCK_ALL = select(
    select(func.count()).select_from(pool).scalar_subquery(),
    select(func.count()).select_from(
        select(pool.c.name).order_by(pool.c.name).with_for_update(skip_locked=True).subquery()
    ).scalar_subquery(),
    func.set_config("enable_seqscan", "off", True),
    func.set_config("enable_bitmapscan", "off", True))


def lock_for_queueing(conn: Connection) -> list[Any] | None:
    """Serialize queueing between schedulers (Airflow's critical section): on PostgreSQL, lock
    every pool row, in name order, until the transaction ends, so the next scheduler counts
    pool, run and task slots only after this one's task instances are queued. SQLite's single
    writer already serializes. On PostgreSQL the same statement has the rest of the
    transaction read through indexes (``engine.index_reads``) and returns the pool rows, for
    ``slot_stats(pools=…)``; None on SQLite."""
    if conn.dialect.name != "postgresql":
        return None
    return list(conn.execute(_LOCK_ALL).all())


def try_lock_for_queueing(conn: Connection) -> bool:
    """``lock_for_queueing`` without waiting: True when this transaction now holds every pool
    row (always on SQLite). On PostgreSQL the rows another transaction holds are skipped, not
    waited for; False then, and the caller must not count or queue (the rows it did lock are
    held until its transaction ends, which it does without waiting on anything else). The same
    statement has the rest of the transaction read through indexes, as queueing does
    (``engine.index_reads``): one round trip for both."""
    if conn.dialect.name != "postgresql":
        return True
    total, locked, *_ = conn.execute(_TRY_LOCK_ALL).one()
    return bool(locked == total)


def list_all(conn: Connection) -> list[Any]:
    return list(conn.execute(_LIST_ALL).all())


def set_pool(conn: Connection, name: str, slots: int, *, description: str | None = None,
             include_deferred: bool | None = None) -> bool:
    """Create or update a pool; True when it was created."""
    values: dict[str, Any] = {"slots": slots}
    if description is not None:
        values["description"] = description
    if include_deferred is not None:
        values["include_deferred"] = include_deferred
    if conn.execute(update(pool).where(pool.c.name == name).values(**values)).rowcount:
        return False
    conn.execute(pool.insert().values(
        name=name, slots=slots, description=description,
        include_deferred=bool(include_deferred)))
    return True


def delete_pool(conn: Connection, name: str) -> bool:
    return bool(conn.execute(delete(pool).where(pool.c.name == name)).rowcount)


def slot_stats(conn: Connection, *, scheduled: bool = True,
               pools: Sequence[Any] | None = None) -> dict[str, PoolStats]:
    """Every pool with the slots its task instances take, by state. ``scheduled=False`` (the
    scheduler's queueing: only the occupied slots matter) leaves the scheduled ones uncounted:
    it reads only the queued, running and deferred task instances, by the state index, however
    many wait scheduled. ``pools``: the pool rows this transaction read already (not read
    again)."""
    if pools is None:  # the pools and their slots in use: one statement
        stats: dict[str, PoolStats] = {}
        for r in conn.execute(_pools_and_used(scheduled)).all():
            s = stats.get(r.name)
            if s is None:
                s = stats[r.name] = PoolStats(r.name, int(r.slots), r.description,
                                              bool(r.include_deferred))
            if r.state is not None:
                setattr(s, r.state, int(r.used))
        return stats
    stats = {r.name: PoolStats(r.name, int(r.slots), r.description, bool(r.include_deferred))
             for r in pools}
    for name, state, used in conn.execute(_slots_used(scheduled)).all():
        s = stats.get(name)
        if s is not None:
            setattr(s, state, int(used))
    return stats


@functools.cache
def _slots_used(scheduled: bool) -> Any:
    # Read on every queueing pass of the scheduler: built once. Grouped by state first, so
    # SQLite reads the states asked for from the index on state (by pool first, it scans the
    # whole table).
    states = _COUNTED if scheduled else tuple(s for s in _COUNTED if s != TI.SCHEDULED.value)
    return (select(ti.pool, ti.state, func.coalesce(func.sum(ti.pool_slots), 0))
            .where(ti.state.in_(states))
            .group_by(ti.state, ti.pool))


@functools.cache
def _pools_and_used(scheduled: bool) -> Any:
    """Every pool (by name) with a row per state its task instances use slots in (none: one
    row with no state)."""
    used = _slots_used(scheduled).subquery("used")
    state, total = used.c.state, list(used.c)[2]
    return (select(pool.c.name, pool.c.slots, pool.c.description, pool.c.include_deferred,
                   state.label("state"), total.label("used"))
            .select_from(pool.outerjoin(used, used.c.pool == pool.c.name))
            .order_by(pool.c.name))


def task_instances_in_pool(conn: Connection, name: str) -> int:
    """Unfinished task instances that use the pool (a pool in use cannot be deleted)."""
    return int(conn.execute(
        select(func.count()).where(ti.pool == name, ti.state.in_(_COUNTED))
    ).scalar_one())


def import_pools(conn: Connection,
                 pools: list[tuple[str, int, str | None, bool]]) -> int:
    """Create or update each (name, slots, description, include_deferred); the number created.
    The caller's transaction makes it all or nothing."""
    return sum(set_pool(conn, name, slots, description=description,
                        include_deferred=include_deferred)
               for name, slots, description, include_deferred in pools)
