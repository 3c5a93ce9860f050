"""Users, passwords, roles and tokens: the rules around the ``users`` repository, shared by
the CLI and the REST API. Each function that changes something is one transaction."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import IntegrityError

from statewright.core.auth import Role, check_password, check_username, parse_role
from statewright.core.errors import StatewrightError
from statewright.db.engine import read_snapshot, transaction
from statewright.db.repositories import users as repo
from statewright.services.auth.passwords import (
    hash_password,
    needs_rehash,
    new_secret,
    random_password,
    secret_hash,
    verify_password,
)

API_TOKEN_PREFIX = "swt_"
SESSION_PREFIX = "sws_"
INITIAL_ADMIN = "admin"
INITIAL_PASSWORD_FILE = "standalone_admin_password.txt"


class AccountError(StatewrightError):
    """Input that cannot be accepted: a bad username, password or role (nothing changed)."""


class UserNotFound(AccountError):
    pass


class UserExists(AccountError):
    pass


class LastAdmin(AccountError):
    """The change would leave no admin."""


@dataclass(frozen=True)
class Identity:
    """Who a request comes from: the user, the role now, and the credential used."""

    username: str
    role: Role
    via: str  # jwt | token | session
    token_id: int | None = None


def _checked(username: str, password: str | None = None) -> None:
    try:
        check_username(username)
        if password is not None:
            check_password(password)
    except ValueError as exc:
        raise AccountError(f"{exc} Nothing was changed.") from None


def _role(value: str | Role) -> Role:
    try:
        return parse_role(str(value))
    except ValueError as exc:
        raise AccountError(f"{exc} Nothing was changed.") from None


def _missing(username: str) -> UserNotFound:
    return UserNotFound(f"No user {username!r}; `statewright users list` shows the users. "
                        "Nothing was changed.")


def create_user(engine: Engine, username: str, password: str, role: str | Role,
                now: datetime) -> None:
    _checked(username, password)
    checked_role = _role(role)
    try:
        with transaction(engine) as conn:
            repo.insert_user(conn, username, hash_password(password), checked_role.value, now)
    except IntegrityError:
        raise UserExists(f"User {username!r} exists already; use `statewright users "
                         "set-password` or `set-role` to change it. Nothing was changed.") from None


def list_users(engine: Engine) -> list[Any]:
    with read_snapshot(engine) as conn:
        return repo.list_users(conn)


def set_password(engine: Engine, username: str, password: str, now: datetime, *,
                 revoke_api_tokens: bool = False) -> None:
    """A new password; the user's JWTs and UI sessions end (and its API tokens, when asked)."""
    _checked(username, password)
    with transaction(engine) as conn:
        if not repo.set_password(conn, username, hash_password(password), now):
            raise _missing(username)
        _end(conn, username, now, api_tokens=revoke_api_tokens)


def _end(conn: Connection, username: str, now: datetime, *, api_tokens: bool
         ) -> tuple[int, int]:
    row = repo.get_user(conn, username)
    if row is None:
        raise _missing(username)
    return repo.end_sign_ins(conn, row.id, now, api_tokens=api_tokens)


def end_sign_ins(engine: Engine, username: str, now: datetime, *, api_tokens: bool = False
                 ) -> tuple[int, int]:
    """Sign a user out everywhere: its JWTs and UI sessions end at once (its API tokens too,
    with ``api_tokens``). Returns (sessions ended, API tokens revoked)."""
    with transaction(engine) as conn:
        return _end(conn, username, now, api_tokens=api_tokens)


def _keeps_an_admin(conn: Connection, username: str) -> None:
    row = repo.get_user(conn, username)
    if row is None:
        raise _missing(username)
    if row.role == Role.ADMIN.value and repo.count_admins(conn) == 1:
        raise LastAdmin(f"{username!r} is the only admin; make another user admin first. "
                        "Nothing was changed.")


def set_role(engine: Engine, username: str, role: str | Role, now: datetime, *,
             revoke_api_tokens: bool = False) -> None:
    """A new role; the user's JWTs and UI sessions end (and its API tokens, when asked): the
    user signs in again under the new role."""
    checked_role = _role(role)
    with transaction(engine) as conn:
        if checked_role is not Role.ADMIN:
            _keeps_an_admin(conn, username)
        if not repo.set_role(conn, username, checked_role.value, now):
            raise _missing(username)
        _end(conn, username, now, api_tokens=revoke_api_tokens)


def delete_user(engine: Engine, username: str) -> None:
    with transaction(engine) as conn:
        _keeps_an_admin(conn, username)
        repo.delete_user(conn, username)


DEACTIVATED = "!"
"""Put before a deactivated user's password hash: no password matches it, and reactivating
removes it, so the same password works again."""


def is_active(row: Any) -> bool:
    """Whether the user (its row) may sign in."""
    return not str(row.password_hash).startswith(DEACTIVATED)


def set_active(engine: Engine, username: str, active: bool, now: datetime) -> None:
    """Deactivate a user: it can no longer sign in, and its JWTs, UI sessions and API tokens
    end at once; or reactivate it: its password works again (revoked tokens stay revoked).
    The only active admin is never deactivated."""
    with transaction(engine) as conn:
        row = repo.get_user(conn, username)
        if row is None:
            raise _missing(username)
        if is_active(row) == active:
            return
        if not active and row.role == Role.ADMIN.value and sum(
                1 for r in repo.list_users(conn) if r.role == Role.ADMIN.value and is_active(r)
        ) == 1:
            raise LastAdmin(f"{username!r} is the only active admin; make another user admin "
                            "first. Nothing was changed.")
        stored = str(row.password_hash)
        repo.set_password(conn, username, stored[len(DEACTIVATED):] if active
                          else DEACTIVATED + stored, now)
        if not active:
            _end(conn, username, now, api_tokens=True)


def authenticate(engine: Engine, username: str, password: str) -> Any:
    """The user row when the password is right, else None (the same time for an unknown
    user). A hash under older parameters is upgraded."""
    with read_snapshot(engine) as conn:
        row = repo.get_user(conn, username)
    if not verify_password(row.password_hash if row else None, password):
        return None
    if needs_rehash(row.password_hash):
        with transaction(engine) as conn:
            repo.rehash_password(conn, row.id, hash_password(password))
    return row


# -- tokens ---------------------------------------------------------------------------------


def create_token(engine: Engine, username: str, *, kind: str, name: str, now: datetime,
                 lifetime: timedelta | None) -> tuple[str, int]:
    """A new API token (``kind="api"``) or UI session; returns the secret (shown once, stored
    hashed) and the token's id."""
    prefix = API_TOKEN_PREFIX if kind == "api" else SESSION_PREFIX
    secret = new_secret(prefix)
    with transaction(engine) as conn:
        user = repo.get_user(conn, username)
        if user is None:
            raise _missing(username)
        if kind == "session":
            repo.purge_sessions(conn, now)  # ended and expired ones are of no use
        pk = repo.insert_token(conn, user_id=user.id, kind=kind, name=name[:100],
                               token_hash=secret_hash(secret), prefix=secret[:12], now=now,
                               expires_at=now + lifetime if lifetime else None)
    return secret, pk


def resolve_token(engine: Engine, secret: str, now: datetime, *, kind: str) -> Identity | str:
    """The identity a token stands for, or why it is refused."""
    with read_snapshot(engine) as conn:
        row = repo.token_with_user(conn, secret_hash(secret))
    if row is None or row.kind != kind:
        return "the token is not known"
    if row.revoked_at is not None:
        return "the token was revoked"
    if row.expires_at is not None and row.expires_at <= now:
        return "the token expired"
    if row.last_used_at is None or now - row.last_used_at > timedelta(minutes=1):
        with transaction(engine) as conn:  # at most one write a minute per token
            repo.touch_token(conn, row.id, now)
    via = "token" if kind == "api" else "session"
    return Identity(row.username, Role(row.role), via, row.id)


def revoke_token(engine: Engine, token_id: int, *, by: Identity, now: datetime) -> None:
    """Revoke a token: one's own, or anyone's for an admin."""
    with transaction(engine) as conn:
        row = repo.get_token(conn, token_id)
        owner = repo.get_user(conn, by.username)
        mine = row is not None and owner is not None and row.user_id == owner.id
        if row is None or row.kind != "api" or not (mine or by.role is Role.ADMIN) \
                or not repo.revoke_token(conn, token_id, now):
            raise AccountError(f"No API token {token_id} of yours that is not revoked; GET "
                               "/api/v1/auth/tokens lists them. Nothing was changed.")


def tokens_of(engine: Engine, username: str) -> list[Any]:
    """A user's API tokens, newest first (revoked and expired ones too)."""
    with read_snapshot(engine) as conn:
        user = repo.get_user(conn, username)
        if user is None:
            raise _missing(username)
        return repo.list_tokens(conn, user.id, "api")


def end_session(engine: Engine, token_id: int, now: datetime) -> None:
    with transaction(engine) as conn:
        repo.revoke_token(conn, token_id, now)
        repo.purge_sessions(conn, now)


# -- standalone ------------------------------------------------------------------------------


def ensure_initial_admin(engine: Engine, home: Path, now: datetime) -> str | None:
    """On a database without users: create ``admin`` with a random password, store it 0600 in
    ``home`` and return it (to be printed once). None when users exist already."""
    with read_snapshot(engine) as conn:
        if repo.count_users(conn):
            return None
    password = random_password()
    try:
        create_user(engine, INITIAL_ADMIN, password, Role.ADMIN, now)
    except UserExists:
        return None  # another process created it meanwhile
    home.mkdir(parents=True, exist_ok=True)
    path = home / INITIAL_PASSWORD_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(f"{INITIAL_ADMIN} {password}\n")
    os.chmod(path, 0o600)
    return password
