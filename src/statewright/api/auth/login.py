"""Logging in with a username and password, shared by ``POST /api/v1/auth/token`` and the web
UI's login form: failed attempts are rate-limited per username and per client address (counted
from the audit log) and each attempt is recorded there."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from fastapi import Request
from fastapi.concurrency import run_in_threadpool

from statewright.api.auth.credentials import Unauthenticated
from statewright.api.deps import engine_of, settings_of
from statewright.api.errors import ApiError
from statewright.core.auth import LoginLimits, login_retry_after
from statewright.core.clock import utcnow
from statewright.db.engine import read_snapshot
from statewright.db.repositories import audit as audit_repo
from statewright.services.auth.accounts import authenticate

WRONG = ("Not authenticated: wrong username or password. Failed logins are limited per user "
         "and per address.")


class TooManyAttempts(ApiError):
    status_code = 429

    def __init__(self, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


def limits_of(request: Request) -> LoginLimits:
    s = settings_of(request)
    return LoginLimits(per_user=s.login_max_failures_per_user,
                       per_address=s.login_max_failures_per_address,
                       window=timedelta(seconds=s.login_failure_window_seconds))


def _address(request: Request) -> str | None:
    return request.client.host if request.client else None


def _check_rate(request: Request, username: str) -> None:
    limits, now = limits_of(request), utcnow()
    with read_snapshot(engine_of(request)) as conn:
        by_user, by_address = audit_repo.failed_logins(
            conn, username=username, address=_address(request), since=now - limits.window)
    wait = login_retry_after(by_user, by_address, now, limits)
    if wait is not None:
        seconds = math.ceil(wait.total_seconds())
        request.state.audit_action = "auth.login_limited"
        raise TooManyAttempts(f"Too many failed logins for {username!r} or from this address; "
                              f"try again in {seconds} s.", seconds)


def _login(request: Request, username: str, password: str) -> Any:
    request.state.audit_username = username
    _check_rate(request, username)
    user = authenticate(engine_of(request), username, password)
    if user is None:
        request.state.audit_action = audit_repo.LOGIN_FAILED
        raise Unauthenticated(WRONG)
    request.state.audit_action = "auth.login"
    return user


async def login(request: Request, username: str, password: str) -> Any:
    """The user row, or ``Unauthenticated`` / ``TooManyAttempts`` (429, Retry-After)."""
    return await run_in_threadpool(_login, request, username, password)
