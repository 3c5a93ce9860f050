"""The rules of durable task state and asset state (pure: no I/O).

A task keeps small JSON values by key. Each value has a retention:

- ``try``: seen only by the try that wrote it (a retry starts without it);
- ``run`` (the default): kept across the task's retries for one pass of its DAG run: kept (and
  shown) after the run ends, dropped when the ended run is cleared and starts over;
- ``never_expire`` (:data:`NEVER_EXPIRE`): kept until deleted, or until the task instance is
  cleared with its state (``tasks clear --clear-state``).

The try number is the fencing token: a write is accepted only from the try the task instance is
running now; a write from an older (zombie) try is refused (:func:`refusal`).
"""

from __future__ import annotations

import enum
import json
from typing import Any

from statewright.core.errors import StatewrightError

__all__ = [
    "DEFAULT_RETENTION",
    "MAX_KEY_LENGTH",
    "MAX_VALUE_BYTES",
    "NEVER_EXPIRE",
    "Retention",
    "StaleTryWrite",
    "TaskStateError",
    "decode_value",
    "encode_value",
    "refusal",
    "retention_of",
    "validate_key",
    "visible",
]

MAX_VALUE_BYTES = 64 * 1024
"""The largest value (its JSON text, UTF-8) one key may hold."""
MAX_KEY_LENGTH = 250


class Retention(enum.StrEnum):
    TRY = "try"
    RUN = "run"
    NEVER_EXPIRE = "never_expire"


NEVER_EXPIRE = Retention.NEVER_EXPIRE
DEFAULT_RETENTION = Retention.RUN


class TaskStateError(StatewrightError, ValueError):
    """A state key or value the store cannot keep; the message names the key."""


class StaleTryWrite(StatewrightError):
    """A write from a try that is no longer the task instance's running try (refused)."""


def validate_key(key: Any) -> str:
    if not isinstance(key, str) or not key.strip():
        raise TaskStateError(f"a task state key must be a non-empty string, got {key!r}")
    if len(key) > MAX_KEY_LENGTH:
        raise TaskStateError(f"task state key {key[:40]!r}... is longer than {MAX_KEY_LENGTH} "
                             "characters")
    return key


def retention_of(value: Any) -> Retention:
    """``value`` as a retention (a :class:`Retention` or its text); None is the default."""
    if value is None:
        return DEFAULT_RETENTION
    try:
        return Retention(str(getattr(value, "value", value)).lower())
    except ValueError:
        raise TaskStateError(
            f"retention must be one of {[r.value for r in Retention]}, got {value!r}") from None


def encode_value(key: str, value: Any, limit: int = MAX_VALUE_BYTES) -> str:
    """The JSON text stored for ``value``; raises :class:`TaskStateError` naming ``key`` when the
    value is not JSON-serialisable or its text is larger than ``limit`` bytes."""
    try:
        text = json.dumps(value, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise TaskStateError(
            f"task state {key!r}: the value is not JSON-serialisable ({exc}); store str, int, "
            "float, bool, None, lists and dicts of them") from None
    size = len(text.encode("utf-8"))
    if size > limit:
        raise TaskStateError(
            f"task state {key!r}: the value is {size} bytes as JSON, more than the limit of "
            f"{limit} bytes; store a reference (a path, a URI) instead of the data")
    return text


def decode_value(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def visible(retention: str, written_by_try: int, reader_try: int | None) -> bool:
    """Whether a stored value is seen by a reader: ``try`` values only by their own try
    (``reader_try`` None: a person or the API, who sees everything)."""
    if reader_try is None or retention != Retention.TRY.value:
        return True
    return written_by_try == reader_try


def refusal(writer_try: int, current_try: int | None, current_state: str | None) -> str | None:
    """Why a write from try ``writer_try`` is refused, or None to accept it. Accepted only while
    the task instance is running that very try."""
    if current_try is None:
        return "the task instance no longer exists"
    if writer_try != current_try:
        return (f"try {writer_try} is stale: the task instance is at try {current_try} "
                f"({current_state})")
    if current_state != "running":
        return f"try {writer_try} is no longer running (the task instance is {current_state})"
    return None
