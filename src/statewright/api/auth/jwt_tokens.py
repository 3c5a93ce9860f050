"""Signed, expiring JWTs (PyJWT, HS256) for the API, and the key that signs them."""

from __future__ import annotations

import os
import secrets
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import jwt

from statewright.config import Settings

ALGORITHM = "HS256"
AUDIENCE = "statewright-api"
KEY_FILE = "secret_key"


def signing_key(settings: Settings) -> str:
    """``STATEWRIGHT_SECRET_KEY``, or a key generated once into ``$STATEWRIGHT_HOME``
    (0600). Servers behind one load balancer must share the key: set the variable."""
    if settings.secret_key:
        return settings.secret_key
    path: Path = settings.home / KEY_FILE
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    settings.home.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(48)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process wrote it first
        return path.read_text().strip()
    with os.fdopen(fd, "w") as f:
        f.write(key + "\n")
    return key


def issue(username: str, *, key: str, now: datetime, lifetime: timedelta) -> str:
    claims = {"sub": username, "iat": int(now.timestamp()), "nbf": int(now.timestamp()),
              "exp": int((now + lifetime).timestamp()), "aud": AUDIENCE,
              "jti": secrets.token_hex(8), "auth_time": now.timestamp()}
    return jwt.encode(claims, key, algorithm=ALGORITHM)


def decode(token: str, *, key: str, now: datetime) -> dict[str, Any] | str:
    """The claims, or why the token is refused (expired, bad signature, malformed)."""
    try:
        claims: dict[str, Any] = jwt.decode(
            token, key, algorithms=[ALGORITHM], audience=AUDIENCE,
            options={"require": ["sub", "exp", "iat"]}, leeway=0)
    except jwt.ExpiredSignatureError:
        return "the token expired; get a new one from POST /api/v1/auth/token"
    except jwt.InvalidSignatureError:
        return "the token's signature does not match (tampered, or signed by another server)"
    except jwt.PyJWTError as exc:
        return f"the token is not valid ({exc})"
    if claims["exp"] <= now.timestamp():
        return "the token expired; get a new one from POST /api/v1/auth/token"
    return claims
