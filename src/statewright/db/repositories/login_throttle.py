"""Login attempts per subject (an account from one client address, or one client address),
counted in one transaction before a password is checked: the row is locked while its count is
decided (``SELECT … FOR UPDATE`` on PostgreSQL and MariaDB; SQLite's write transactions are
serialized already), so two API servers on one database share the count exactly."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from statewright.db.tables_auth import login_throttle

c = login_throttle.c
ACCOUNT = "account"
ADDRESS = "address"

Decide = Callable[[int, datetime | None], tuple[int, datetime] | timedelta]
"""(attempts so far, blocked until) → the new (attempts, blocked until), or the wait."""


def account_subject(username: str, address: str | None) -> str:
    return f"{username}\n{address or '-'}"[:200]


def _locked(conn: Connection, scope: str, subject: str) -> Any:
    query = select(c.attempts, c.blocked_until).where(c.scope == scope, c.subject == subject)
    if conn.dialect.name != "sqlite":
        query = query.with_for_update()
    return conn.execute(query).first()


def _row(conn: Connection, scope: str, subject: str, now: datetime) -> Any:
    """The subject's row, locked; created (with no attempts) when missing."""
    row = _locked(conn, scope, subject)
    if row is not None:
        return row
    try:
        with conn.begin_nested():
            conn.execute(insert(login_throttle).values(
                scope=scope, subject=subject, attempts=0, blocked_until=now))
    except IntegrityError:
        pass  # another server inserted it meanwhile: read theirs, locked
    return _locked(conn, scope, subject)


def count(conn: Connection, subjects: Sequence[tuple[str, str, Decide]], now: datetime
          ) -> timedelta | None:
    """Count one attempt for every subject, or none: the longest wait when any is blocked."""
    decided: list[tuple[str, str, int, datetime]] = []
    waits: list[timedelta] = []
    for scope, subject, decide in subjects:
        row = _row(conn, scope, subject, now)
        fresh = row.attempts == 0
        outcome = decide(int(row.attempts), None if fresh else row.blocked_until)
        if isinstance(outcome, timedelta):
            waits.append(outcome)
        else:
            decided.append((scope, subject, *outcome))
    if waits:
        return max(waits)
    for scope, subject, attempts, until in decided:
        conn.execute(update(login_throttle).where(c.scope == scope, c.subject == subject)
                     .values(attempts=attempts, blocked_until=until))
    return None


def succeeded(conn: Connection, username: str, address: str | None) -> None:
    """A right password: the account's count from this address starts again, and the
    address gets back the attempt it was charged."""
    conn.execute(delete(login_throttle).where(
        c.scope == ACCOUNT, c.subject == account_subject(username, address)))
    if address is not None:
        conn.execute(update(login_throttle).where(
            c.scope == ADDRESS, c.subject == address, c.attempts > 0)
            .values(attempts=c.attempts - 1))


def purge(conn: Connection, before: datetime) -> int:
    """Forget subjects whose last wait ended before ``before`` (their count is reset anyway)."""
    done = conn.execute(delete(login_throttle).where(c.blocked_until < before))
    return int(done.rowcount)
