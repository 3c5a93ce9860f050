"""Logging in with a username and password, shared by ``POST /api/v1/auth/token`` and the web
UI's login form.

Every attempt is counted in the database before its password is checked (per account and
client address, and per client address; ``core.auth.LoginBackoff``): concurrent guesses are
refused at once past the free attempts, on one API server or many. Passwords are verified off
the event loop, at most ``STATEWRIGHT_LOGIN_HASH_CONCURRENCY`` at a time, so a burst of logins
never starves the other requests. Each attempt is in the audit log with the real peer."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import anyio
from fastapi import Request
from fastapi.concurrency import run_in_threadpool

from statewright.api.auth.credentials import Unauthenticated
from statewright.api.deps import engine_of, settings_of
from statewright.api.errors import ApiError
from statewright.core.auth import LoginBackoff
from statewright.core.clock import utcnow
from statewright.db.repositories import audit as audit_repo
from statewright.services.auth.accounts import authenticate
from statewright.services.auth.throttle import count_login_attempt, login_succeeded

WRONG = ("Not authenticated: wrong username or password. Repeated failed logins wait longer "
         "and longer, per user and per address.")


class TooManyAttempts(ApiError):
    status_code = 429

    def __init__(self, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


def backoffs_of(request: Request) -> tuple[LoginBackoff, LoginBackoff]:
    """The rules per account and address, and per address."""
    s = settings_of(request)
    base, cap = (timedelta(seconds=s.login_backoff_seconds),
                 timedelta(seconds=s.login_backoff_max_seconds))
    window = timedelta(seconds=s.login_failure_window_seconds)
    return (LoginBackoff(s.login_max_failures_per_user, base, cap, window),
            LoginBackoff(s.login_max_failures_per_address, base, cap, window))


COUNTING_CONCURRENCY = 4
"""Login attempts counted at the same time: a burst of logins never holds more than this many
of the server's database connections (the health check and the pages need theirs)."""


def _limiter(request: Request, name: str, size: int) -> anyio.CapacityLimiter:
    limiter = getattr(request.app.state, name, None)
    if limiter is None:  # made on first use, in the event loop
        limiter = anyio.CapacityLimiter(size)
        setattr(request.app.state, name, limiter)
    return limiter


def hash_limiter(request: Request) -> anyio.CapacityLimiter:
    """The app's bound on concurrent password checks."""
    return _limiter(request, "login_hash_limiter", settings_of(request).login_hash_concurrency)


def peer_of(request: Request) -> str | None:
    """The client's address: the connection's peer, or what a trusted proxy forwarded."""
    return request.client.host if request.client else None


def _count(request: Request, username: str) -> None:
    account, per_address = backoffs_of(request)
    wait = count_login_attempt(engine_of(request), username, peer_of(request), utcnow(),
                               account=account, per_address=per_address)
    if wait is not None:
        seconds = max(1, math.ceil(wait.total_seconds()))
        request.state.audit_action = "auth.login_limited"
        raise TooManyAttempts(f"Too many failed logins for {username!r} from this address; "
                              f"try again in {seconds} s.", seconds)


async def login(request: Request, username: str, password: str) -> Any:
    """The user row, or ``Unauthenticated`` / ``TooManyAttempts`` (429, Retry-After)."""
    request.state.audit_username = username
    await anyio.to_thread.run_sync(_count, request, username,
                                   limiter=_limiter(request, "login_count_limiter",
                                                    COUNTING_CONCURRENCY))
    user = await anyio.to_thread.run_sync(authenticate, engine_of(request), username, password,
                                          limiter=hash_limiter(request))
    if user is None:
        request.state.audit_action = audit_repo.LOGIN_FAILED
        raise Unauthenticated(WRONG)
    await run_in_threadpool(login_succeeded, engine_of(request), username, peer_of(request))
    request.state.audit_action = "auth.login"
    return user
