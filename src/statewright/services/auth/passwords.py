"""Password hashing with argon2id (argon2-cffi), and hashing of random bearer secrets."""

from __future__ import annotations

import hashlib
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_HASHER = PasswordHasher()  # argon2id with the library's current recommended parameters
# Verified when the username is unknown, so an unknown user takes as long as a wrong password.
_DUMMY_HASH = _HASHER.hash(secrets.token_urlsafe(16))


def hash_password(password: str) -> str:
    return _HASHER.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """True when ``password`` matches; False otherwise (an unknown user: ``None``)."""
    try:
        return _HASHER.verify(password_hash or _DUMMY_HASH, password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    return _HASHER.check_needs_rehash(password_hash)


def new_secret(prefix: str) -> str:
    """A random bearer secret: ``prefix`` + 256 bits, URL-safe."""
    return prefix + secrets.token_urlsafe(32)


def secret_hash(secret: str) -> str:
    """What is stored of a random secret: its SHA-256 (the secret has 256 bits of entropy, so
    a fast hash suffices; passwords, chosen by people, get argon2id)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def random_password() -> str:
    return secrets.token_urlsafe(15)
