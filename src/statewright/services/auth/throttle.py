"""Failed-login delays: every attempt is counted (in the database, atomically) before its
password is checked, per account and client address and per client address; the rule of
``core.auth.LoginBackoff`` decides how long the next attempt waits."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Engine

from statewright.core.auth import LoginBackoff, count_attempt
from statewright.db.engine import transaction
from statewright.db.repositories import login_throttle as repo


def _decide(rule: LoginBackoff, now: datetime) -> repo.Decide:
    def decide(attempts: int, blocked_until: datetime | None
               ) -> tuple[int, datetime] | timedelta:
        outcome = count_attempt(attempts, blocked_until, now, rule)
        return outcome if isinstance(outcome, timedelta) else (
            outcome.attempts, outcome.blocked_until)

    return decide


def count_login_attempt(engine: Engine, username: str, address: str | None, now: datetime, *,
                        account: LoginBackoff, per_address: LoginBackoff) -> timedelta | None:
    """Count an attempt before its password is checked; the wait when it must not be tried
    (nothing is counted then)."""
    subjects: list[tuple[str, str, repo.Decide]] = [
        (repo.ACCOUNT, repo.account_subject(username, address), _decide(account, now))]
    if address is not None:
        subjects.append((repo.ADDRESS, address, _decide(per_address, now)))
    with transaction(engine) as conn:
        wait = repo.count(conn, subjects, now)
    with transaction(engine) as conn:  # apart: no lock of the count is held meanwhile
        repo.purge(conn, now - max(account.window, per_address.window) - account.cap)
    return wait


def login_succeeded(engine: Engine, username: str, address: str | None) -> None:
    with transaction(engine) as conn:
        repo.succeeded(conn, username, address)
