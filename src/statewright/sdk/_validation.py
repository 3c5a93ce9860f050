"""Checks and conversions shared by DAG and operator arguments."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

from statewright.core.errors import DagDefinitionError

MAX_ID_LENGTH = 250
_ID_RE = re.compile(r"^[\w.-]+$")


def validate_id(value: Any, kind: str) -> str:
    """Check a dag_id / task_id: letters, digits, ``_``, ``-``, ``.``; at most 250 characters."""
    if not isinstance(value, str) or not value:
        raise DagDefinitionError(f"{kind} must be a non-empty string, got {value!r}.")
    if len(value) > MAX_ID_LENGTH:
        raise DagDefinitionError(
            f"{kind} {value[:40]!r}... is {len(value)} characters long; "
            f"the limit is {MAX_ID_LENGTH}."
        )
    if not _ID_RE.match(value):
        raise DagDefinitionError(
            f"{kind} {value!r} is not valid: use only letters, digits, "
            "underscores (_), dashes (-) and dots (.)."
        )
    return value


def to_timedelta(value: Any, what: str, *, allow_none: bool = False) -> timedelta | None:
    """Accept a ``timedelta`` or a number of seconds; reject everything else and negatives."""
    if value is None:
        if allow_none:
            return None
        raise DagDefinitionError(f"{what} must be a timedelta or a number of seconds, not None.")
    if isinstance(value, bool) or not isinstance(value, (timedelta, int, float)):
        raise DagDefinitionError(
            f"{what} must be a timedelta or a number of seconds, "
            f"got {type(value).__name__} {value!r}."
        )
    delta = value if isinstance(value, timedelta) else timedelta(seconds=value)
    if delta < timedelta(0):
        raise DagDefinitionError(f"{what} must not be negative, got {delta}.")
    return delta


def seconds_or_none(value: timedelta | None) -> float | None:
    return None if value is None else value.total_seconds()


def to_callback_list(value: Any, what: str) -> list[Callable[..., Any]]:
    """A callback argument is ``None``, one callable or a list of callables."""
    if value is None:
        return []
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if not callable(item):
            raise DagDefinitionError(
                f"{what} must be a callable or a list of callables, got {item!r}."
            )
    return items


def check_json(value: Any, what: str) -> None:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise DagDefinitionError(f"{what} must be plain JSON data: {exc}.") from None


def unknown_arguments_message(unknown: Iterable[str], known: Iterable[str]) -> str:
    """Name each unknown argument, with a close known spelling when there is one."""
    known = list(known)
    parts = []
    for name in sorted(unknown):
        close = difflib.get_close_matches(name, known, n=1)
        parts.append(f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name))
    return ", ".join(parts)
