"""The audit log: one append-only row per API action (who, what, target, when, outcome,
client address). Rows are only ever inserted and read."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, insert, or_, select

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
