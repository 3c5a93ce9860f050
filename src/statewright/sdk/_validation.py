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


def check_hook(value: Any, what: str) -> Callable[..., Any] | None:
    """A ``pre_execute`` / ``post_execute`` hook: a callable or None."""
    if value is not None and not callable(value):
        raise DagDefinitionError(f"{what} must be a callable or None, got {value!r}.")
    return value  # type: ignore[no-any-return]


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


WEIGHT_RULES = ("downstream", "upstream", "absolute")


INT32_MAX = 2**31 - 1
"""The largest value of a 32-bit integer column (a task instance's tries, its pool slots)."""


def check_int(value: Any, what: str, *, minimum: int | None = None,
              maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise DagDefinitionError(f"{what} must be an integer, got {value!r}.")
    if minimum is not None and value < minimum:
        raise DagDefinitionError(f"{what} must be at least {minimum}, got {value}.")
    if maximum is not None and value > maximum:
        raise DagDefinitionError(f"{what} must be at most {maximum}, got {value}.")
    return value


def check_retries(value: Any, where: str) -> int:
    if value is None:
        return 0
    return check_int(value, f"{where}: retries", minimum=0, maximum=INT32_MAX)


def check_backoff(value: Any, where: str) -> bool:
    # Airflow 3 also takes a number here (the backoff multiplier); only doubling is supported.
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 2):
        return value == 2
    raise DagDefinitionError(
        f"{where}: retry_exponential_backoff must be True (the delay doubles with each try) "
        f"or False, got {value!r}."
    )


def check_bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise DagDefinitionError(f"{what} must be True or False, got {value!r}.")
    return value


MAX_NAME_LENGTH = 256
"""A pool's or a queue's name (Airflow's limit too): longer, the database refuses the task's
rows when a run is created, so the file is refused when it is parsed."""
MAX_OPERATOR_NAME = 100
"""The operator's class name as stored with each task instance (display only): clipped."""


def check_name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise DagDefinitionError(f"{what} must be a non-empty string, got {value!r}.")
    if len(value) > MAX_NAME_LENGTH:
        raise DagDefinitionError(
            f"{what} {value[:40]!r}... is {len(value)} characters long; "
            f"the limit is {MAX_NAME_LENGTH}.")
    return value


def check_weight_rule(weight_rule: Any, where: str) -> str:
    """``weight_rule`` as stored: a built-in rule, or the dotted path of a priority-weight
    strategy a plugin registers (given as an instance or as the path)."""
    from statewright.sdk.plugins import PriorityWeightStrategy, priority_weight_strategy

    if isinstance(weight_rule, PriorityWeightStrategy):
        weight_rule = f"{type(weight_rule).__module__}.{type(weight_rule).__qualname__}"
    if weight_rule in WEIGHT_RULES:
        return str(weight_rule)
    if isinstance(weight_rule, str) and "." in weight_rule:
        if priority_weight_strategy(weight_rule) is None:
            raise DagDefinitionError(
                f"{where}: weight_rule {weight_rule!r} is not a priority-weight strategy any "
                "plugin registers; list the class in a plugin's priority_weight_strategies")
        return weight_rule
    raise DagDefinitionError(
        f"{where}: weight_rule must be one of {', '.join(WEIGHT_RULES)} or a "
        f"PriorityWeightStrategy a plugin registers; got {weight_rule!r}.")
