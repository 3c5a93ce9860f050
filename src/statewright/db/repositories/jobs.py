"""The ``job`` table: one row per long-running component (triggerer, …) with its heartbeat.

``status`` is ``running`` or ``stopped``; it is bookkeeping, not a state machine. A job whose
heartbeat is older than a threshold is dead, whatever its status says.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, func, insert, not_, select, update

from statewright.db.tables import job

RUNNING = "running"
STOPPED = "stopped"


def register(
    conn: Connection, *, job_type: str, hostname: str, pid: int, capacity: int | None,
    now: datetime,
) -> int:
    return int(conn.execute(
        insert(job).values(job_type=job_type, hostname=hostname, pid=pid, status=RUNNING,
                           start_date=now, latest_heartbeat=now, capacity=capacity)
        .returning(job.c.id)
    ).scalar_one())


def heartbeat(conn: Connection, job_id: int, now: datetime) -> bool:
    """Touch the heartbeat; False when the row is gone or was marked stopped."""
    res = conn.execute(
        update(job).where(job.c.id == job_id, job.c.status == RUNNING)
        .values(latest_heartbeat=now)
    )
    return bool(res.rowcount)


def stop(conn: Connection, job_id: int, now: datetime) -> None:
    conn.execute(update(job).where(job.c.id == job_id).values(status=STOPPED, end_date=now))


def alive_ids(conn: Connection, job_type: str, heartbeat_after: datetime) -> set[int]:
    """Jobs of ``job_type`` that are running and heartbeated after the given moment."""
    rows = conn.execute(
        select(job.c.id).where(job.c.job_type == job_type, job.c.status == RUNNING,
                               job.c.latest_heartbeat > heartbeat_after)
    ).all()
    return {r.id for r in rows}


def get(conn: Connection, job_id: int) -> Any:
    return conn.execute(select(job).where(job.c.id == job_id)).first()


def get_many(conn: Connection, ids: Iterable[int]) -> dict[int, Any]:
    wanted = list(set(ids))
    if not wanted:
        return {}
    return {r.id: r for r in conn.execute(select(job).where(job.c.id.in_(wanted))).all()}


def list_jobs(conn: Connection, job_type: str | None = None, limit: int = 50) -> list[Any]:
    stmt = select(job).order_by(job.c.latest_heartbeat.desc()).limit(limit)
    if job_type:
        stmt = stmt.where(job.c.job_type == job_type)
    return list(conn.execute(stmt).all())


def is_alive(status: str | None, latest_heartbeat: datetime | None, *,
             heartbeat_after: datetime) -> bool:
    """A job is alive when it is running and heartbeated after the given moment."""
    return status == RUNNING and latest_heartbeat is not None \
        and latest_heartbeat > heartbeat_after


def list_page(conn: Connection, *, job_type: str | None, hostname: str | None,
              alive: bool | None, heartbeat_after: datetime, limit: int, offset: int
              ) -> tuple[list[Any], int]:
    """Jobs, most recent heartbeat first, filtered; and how many match."""
    where: list[Any] = []
    if job_type:
        where.append(job.c.job_type == job_type)
    if hostname:
        where.append(job.c.hostname == hostname)
    if alive is not None:
        live = and_(job.c.status == RUNNING, job.c.latest_heartbeat > heartbeat_after)
        where.append(live if alive else not_(live))
    rows = conn.execute(select(job).where(*where).order_by(job.c.latest_heartbeat.desc(),
                                                           job.c.id.desc())
                        .limit(limit).offset(offset)).all()
    total = conn.execute(select(func.count()).select_from(job).where(*where)).scalar_one()
    return list(rows), int(total)
