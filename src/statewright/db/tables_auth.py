"""Tables of authentication: users, API tokens and UI sessions, login attempts, the audit
log."""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Index, Integer, String, Table, Text

from statewright.db.tables import UTCDateTime, metadata

auth_user = Table(
    "auth_user",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("username", String(64), nullable=False, unique=True),
    Column("password_hash", String(255), nullable=False),  # argon2id, PHC string
    Column("role", String(20), nullable=False),  # viewer | operator | admin
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # JWTs issued before this moment are no longer accepted (password changed, user revoked).
    Column("tokens_valid_after", UTCDateTime, nullable=False),
)

auth_token = Table(
    "auth_token",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user_id", Integer, ForeignKey("auth_user.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(20), nullable=False),  # api (long-lived) | session (web UI)
    Column("name", String(100), nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),  # sha256 of the secret
    Column("prefix", String(16), nullable=False),  # shown to recognise a token
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=True),
    Column("last_used_at", UTCDateTime, nullable=True),
    Column("revoked_at", UTCDateTime, nullable=True),
    Index(None, "user_id", "kind"),
)

login_throttle = Table(
    "login_throttle",
    metadata,
    # account: "<username>\n<client address>"; address: "<client address>"
    Column("scope", String(10), primary_key=True),
    Column("subject", String(200), primary_key=True),
    Column("attempts", Integer, nullable=False),  # login attempts in a row, counted up front
    Column("blocked_until", UTCDateTime, nullable=False),  # the next attempt waits until then
    Index(None, "blocked_until"),
)

audit_log = Table(
    "audit_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", UTCDateTime, nullable=False),
    Column("username", String(64), nullable=True),  # None: no (valid) credentials
    Column("action", String(100), nullable=False),  # e.g. dag_run.trigger, auth.login
    Column("method", String(10), nullable=False),
    Column("path", Text, nullable=False),
    Column("dag_id", String(250), nullable=True),
    Column("target", Text, nullable=True),
    Column("outcome", String(20), nullable=False),  # success | denied | failed | error
    Column("status_code", Integer, nullable=False),
    Column("client_address", String(64), nullable=True),
    Column("detail", Text, nullable=True),
    Index(None, "at"),
    Index(None, "dag_id", "at"),
    Index(None, "username", "at"),
    Index(None, "action", "at"),
)
