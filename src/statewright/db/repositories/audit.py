"""The audit log: one append-only row per API action (who, what, target, when, outcome,
client address). Rows are only ever inserted and read."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, insert, or_, select

from statewright.db.repositories import searching
from statewright.db.tables_auth import audit_log

a = audit_log.c
LOGIN_FAILED = "auth.login_failed"


def record(conn: Connection, *, at: datetime, username: str | None, action: str, method: str,
           path: str, outcome: str, status_code: int, dag_id: str | None = None,
           target: str | None = None, client_address: str | None = None,
           detail: str | None = None) -> None:
    conn.execute(insert(audit_log).values(
        at=at, username=username, action=action[:100], method=method[:10], path=path,
        dag_id=dag_id, target=target, outcome=outcome, status_code=status_code,
        client_address=(client_address or None) and client_address[:64], detail=detail))


def record_many(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Rows a service writes in one go (each with every column of ``record`` but the address),
    e.g. the DAG processor's pauses at creation."""
    if rows:
        conn.execute(insert(audit_log), [{"client_address": None, **r} for r in rows])


def page(conn: Connection, *, limit: int, offset: int, dag_id: str | None = None,
         username: str | None = None, action: str | None = None, outcome: str | None = None,
         ) -> tuple[list[Any], int]:
    """Newest first, filtered by DAG, user, action and outcome; and the total that match."""
    where = []
    if dag_id:
        where.append(a.dag_id == dag_id)
    if username:
        where.append(a.username == username)
    if action:
        where.append(a.action == action)
    if outcome:
        where.append(a.outcome == outcome)
    rows = conn.execute(select(audit_log).where(*where).order_by(a.id.desc())
                        .limit(limit).offset(offset)).all()
    total = conn.execute(select(func.count()).select_from(audit_log).where(*where)).scalar_one()
    return list(rows), int(total)


@dataclass(frozen=True)
class AuditFilter:
    """What ``page_filtered`` keeps (Airflow's event log filters over the audit log)."""

    dag_id: str | None = None
    username: str | None = None
    action: str | None = None
    included: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    patterns: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    """``dag_id``, ``username``, ``action`` → (pattern, prefix)."""
    at: searching.Bounds = (None, None, None, None)


ORDER = {"id": a.id, "at": a.at, "dag_id": a.dag_id, "username": a.username,
         "action": a.action}


def page_filtered(conn: Connection, f: AuditFilter, *, order: list[tuple[str, bool]],
                  limit: int, offset: int) -> tuple[list[Any], int]:
    """A page of the rows ``f`` keeps, sorted by ``order`` ((name, descending) pairs of
    ``ORDER``; then newest first), and how many were kept."""
    equal = ((a.dag_id, f.dag_id), (a.username, f.username), (a.action, f.action))
    where: list[Any] = [col == value for col, value in equal if value]
    if f.included:
        where.append(a.action.in_(f.included))
    if f.excluded:
        where.append(a.action.not_in(f.excluded))
    for name, (pattern, prefix) in f.patterns.items():
        where += searching.searched(ORDER[name], pattern, prefix)
    where += searching.within(a.at, f.at)
    rows = conn.execute(select(audit_log).where(*where)
                        .order_by(*searching.ordered(ORDER, order), a.id.desc())
                        .limit(limit).offset(offset)).all()
    total = conn.execute(select(func.count()).select_from(audit_log).where(*where)).scalar_one()
    return list(rows), int(total)


def one(conn: Connection, event_id: int) -> Any:
    """One row of the audit log by its id (None when there is none)."""
    return conn.execute(select(audit_log).where(a.id == event_id)).first()


def failed_logins(conn: Connection, *, username: str, address: str | None, since: datetime
                  ) -> tuple[list[datetime], list[datetime]]:
    """Times of the failed logins since ``since``: for ``username``, and from ``address``."""
    rows = conn.execute(
        select(a.at, a.username, a.client_address)
        .where(a.action == LOGIN_FAILED, a.at >= since,
               or_(a.username == username, a.client_address == address))).all()
    by_user = [r.at for r in rows if r.username == username]
    by_address = [r.at for r in rows if address is not None and r.client_address == address]
    return by_user, by_address
