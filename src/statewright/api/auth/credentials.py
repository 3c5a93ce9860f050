"""Who sent a request: a bearer token (a JWT, or a long-lived API token ``swt_…``) or the web
UI's session cookie. A state-changing request carried by the cookie needs the CSRF token too."""

from __future__ import annotations

import hashlib
import hmac
from datetime import timedelta

from fastapi import Request

from statewright.api.auth import jwt_tokens
from statewright.api.deps import engine_of, settings_of
from statewright.api.errors import ApiError
from statewright.core.auth import READ_METHODS, Role
from statewright.core.clock import utcnow
from statewright.core.transitions import Actor, Person, Who
from statewright.db.engine import read_snapshot
from statewright.db.repositories import users as user_repo
from statewright.services.auth.accounts import API_TOKEN_PREFIX, Identity, resolve_token

SESSION_COOKIE = "statewright_session"
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"


class Unauthenticated(ApiError):
    status_code = 401


class Forbidden(ApiError):
    status_code = 403


def key_of(request: Request) -> str:
    key = getattr(request.app.state, "signing_key", None)
    if key is None:
        key = request.app.state.signing_key = jwt_tokens.signing_key(settings_of(request))
    return str(key)


def csrf_token(request: Request, session_secret: str) -> str:
    """The CSRF token of a session: derived from it, so nothing more is stored."""
    return hmac.new(key_of(request).encode(), b"csrf:" + session_secret.encode(),
                    hashlib.sha256).hexdigest()


def _from_jwt(request: Request, token: str) -> Identity:
    now = utcnow()
    claims = jwt_tokens.decode(token, key=key_of(request), now=now)
    if isinstance(claims, str):
        raise Unauthenticated(f"Not authenticated: {claims}.")
    with read_snapshot(engine_of(request)) as conn:
        user = user_repo.get_user(conn, str(claims["sub"]))
    if user is None:
        raise Unauthenticated(f"Not authenticated: the user {claims['sub']!r} of the token "
                              "no longer exists.")
    if float(claims.get("auth_time", claims["iat"])) < user.tokens_valid_after.timestamp():
        raise Unauthenticated("Not authenticated: the token was issued before the user's "
                              "password changed, role changed or sign-ins were ended; log "
                              "in again.")
    return Identity(user.username, Role(user.role), "jwt")


def _from_secret(request: Request, secret: str, kind: str) -> Identity:
    found = resolve_token(engine_of(request), secret, utcnow(), kind=kind)
    if isinstance(found, str):
        what = "API token" if kind == "api" else "session"
        raise Unauthenticated(f"Not authenticated: {found} ({what}).")
    return found


def session_secret(request: Request) -> str | None:
    return request.cookies.get(SESSION_COOKIE) or None


def identify(request: Request, form_csrf: str | None = None) -> Identity:
    """The identity behind the request, or ``Unauthenticated`` saying what was wrong."""
    header = request.headers.get("authorization")
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("Not authenticated: the Authorization header must be "
                                  "'Bearer <token>'.")
        token = token.strip()
        if token.startswith(API_TOKEN_PREFIX):
            return _from_secret(request, token, "api")
        return _from_jwt(request, token)
    secret = session_secret(request)
    if secret is None:
        raise Unauthenticated("Not authenticated: send 'Authorization: Bearer <token>' (a JWT "
                              "from POST /api/v1/auth/token, or an API token), or log in to "
                              "the web UI at /login.")
    identity = _from_secret(request, secret, "session")
    if request.method.upper() not in READ_METHODS:
        given = request.headers.get(CSRF_HEADER) or form_csrf or ""
        if not hmac.compare_digest(given, csrf_token(request, secret)):
            request.state.audit_username = identity.username
            raise Forbidden(f"Missing or wrong CSRF token: a state-changing request made with "
                            f"the session cookie needs the page's token in the {CSRF_HEADER} "
                            "header. Reload the page and try again. Nothing was changed.")
    return identity


def session_lifetime(request: Request) -> timedelta:
    return timedelta(seconds=settings_of(request).session_lifetime_seconds)


def actor_of(request: Request) -> Who:
    """The actor recorded for a state change made by this request: ``user:<name>``."""
    identity = getattr(request.state, "identity", None)
    return Person(Actor.API, identity.username) if identity is not None else Actor.API
