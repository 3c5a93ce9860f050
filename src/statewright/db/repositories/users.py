"""Users and their tokens (long-lived API tokens and web UI sessions), stored hashed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, func, insert, or_, select, update

from statewright.db.tables_auth import auth_token, auth_user

u = auth_user.c
t = auth_token.c


# -- users ----------------------------------------------------------------------------------


def insert_user(conn: Connection, username: str, password_hash: str, role: str,
                now: datetime) -> int:
    """A new user; raises SQLAlchemy's IntegrityError when the username is taken."""
    pk = conn.execute(insert(auth_user).values(
        username=username, password_hash=password_hash, role=role, created_at=now,
        updated_at=now, tokens_valid_after=now).returning(u.id)).scalar_one()
    return int(pk)


def get_user(conn: Connection, username: str) -> Any:
    return conn.execute(select(auth_user).where(u.username == username)).first()


def list_users(conn: Connection) -> list[Any]:
    return list(conn.execute(select(auth_user).order_by(u.username)).all())


def count_users(conn: Connection) -> int:
    return int(conn.execute(select(func.count()).select_from(auth_user)).scalar_one())


def set_password(conn: Connection, username: str, password_hash: str, now: datetime) -> bool:
    """New password; JWTs issued before ``now`` stop working. False when no such user."""
    done = conn.execute(update(auth_user).where(u.username == username).values(
        password_hash=password_hash, updated_at=now, tokens_valid_after=now))
    return done.rowcount == 1


def rehash_password(conn: Connection, user_id: int, password_hash: str) -> None:
    """The same password under newer hashing parameters (no token is invalidated)."""
    conn.execute(update(auth_user).where(u.id == user_id).values(password_hash=password_hash))


def set_role(conn: Connection, username: str, role: str, now: datetime) -> bool:
    """New role; JWTs issued before ``now`` stop working. False when no such user."""
    done = conn.execute(update(auth_user).where(u.username == username).values(
        role=role, updated_at=now, tokens_valid_after=now))
    return done.rowcount == 1


def end_sign_ins(conn: Connection, user_id: int, now: datetime, *, api_tokens: bool
                 ) -> tuple[int, int]:
    """End a user's sign-ins: its JWTs issued before ``now`` stop working, its UI sessions
    are deleted and, with ``api_tokens``, its API tokens revoked. Returns (sessions ended, API
    tokens revoked)."""
    conn.execute(update(auth_user).where(u.id == user_id).values(tokens_valid_after=now))
    sessions = conn.execute(delete(auth_token).where(
        t.user_id == user_id, t.kind == "session")).rowcount
    revoked = 0
    if api_tokens:
        revoked = conn.execute(update(auth_token).where(
            t.user_id == user_id, t.kind == "api", t.revoked_at.is_(None))
            .values(revoked_at=now)).rowcount
    return int(sessions), int(revoked)


def delete_user(conn: Connection, username: str) -> bool:
    """Delete the user and (cascade) its tokens and sessions."""
    row = get_user(conn, username)
    if row is None:
        return False
    conn.execute(delete(auth_token).where(t.user_id == row.id))
    conn.execute(delete(auth_user).where(u.id == row.id))
    return True


def count_admins(conn: Connection) -> int:
    return int(conn.execute(select(func.count()).select_from(auth_user).where(
        u.role == "admin")).scalar_one())


# -- tokens ---------------------------------------------------------------------------------


def insert_token(conn: Connection, *, user_id: int, kind: str, name: str, token_hash: str,
                 prefix: str, now: datetime, expires_at: datetime | None) -> int:
    pk = conn.execute(insert(auth_token).values(
        user_id=user_id, kind=kind, name=name, token_hash=token_hash, prefix=prefix,
        created_at=now, expires_at=expires_at).returning(t.id)).scalar_one()
    return int(pk)


def token_with_user(conn: Connection, token_hash: str) -> Any:
    """The token row (any state) joined with its user's name, role and validity."""
    return conn.execute(
        select(t.id, t.kind, t.name, t.expires_at, t.revoked_at, t.last_used_at, t.user_id,
               u.username, u.role)
        .select_from(auth_token.join(auth_user, u.id == t.user_id))
        .where(t.token_hash == token_hash)).first()


def touch_token(conn: Connection, token_id: int, now: datetime) -> None:
    conn.execute(update(auth_token).where(t.id == token_id).values(last_used_at=now))


def list_tokens(conn: Connection, user_id: int | None, kind: str) -> list[Any]:
    """Tokens of one user (or of everyone), newest first, with the owner's name."""
    query = (select(auth_token, u.username)
             .select_from(auth_token.join(auth_user, u.id == t.user_id))
             .where(t.kind == kind).order_by(t.id.desc()))
    if user_id is not None:
        query = query.where(t.user_id == user_id)
    return list(conn.execute(query).all())


def get_token(conn: Connection, token_id: int) -> Any:
    """The token row with its owner's ``username``."""
    return conn.execute(select(auth_token, u.username)
                        .select_from(auth_token.join(auth_user, u.id == t.user_id))
                        .where(t.id == token_id)).first()


def revoke_token(conn: Connection, token_id: int, now: datetime) -> bool:
    """Revoke a token not yet revoked; False when there is none such."""
    done = conn.execute(update(auth_token).where(t.id == token_id, t.revoked_at.is_(None))
                        .values(revoked_at=now))
    return done.rowcount == 1


def purge_sessions(conn: Connection, now: datetime) -> int:
    """Delete UI sessions that expired or were ended (logout)."""
    done = conn.execute(delete(auth_token).where(
        t.kind == "session", or_(t.expires_at < now, t.revoked_at.is_not(None))))
    return int(done.rowcount)
