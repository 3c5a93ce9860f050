"""Limits on input: how deep, how big and how many items a value given from outside may be.

A value a caller sends (a run's ``conf``, params, an XCom value, a HITL response, any JSON
body) is checked before it is stored or handed to a task process: one nested too deep cannot
be pickled, serialized or shown (Python's recursion limit), and one too big fills memory and
pipes. The checks walk the value without recursion, so a value of any depth is checked safely.
Pure: the limits come from the settings (``config.Settings.input_limits``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from statewright.core.errors import StatewrightError

DEPTH_SETTING = "STATEWRIGHT_MAX_INPUT_DEPTH"
BYTES_SETTING = "STATEWRIGHT_MAX_INPUT_BYTES"
ITEMS_SETTING = "STATEWRIGHT_MAX_INPUT_ITEMS"


@dataclass(frozen=True)
class InputLimits:
    max_depth: int = 64
    """Levels of nested lists and objects."""
    max_bytes: int = 1_048_576
    """Size of the value written as JSON."""
    max_items: int = 10_000
    """List items and object members, counted at every level."""


DEFAULT_LIMITS = InputLimits()


class InputTooLarge(StatewrightError):
    """A value over one of the input limits; ``limit`` names the setting."""

    def __init__(self, what: str, limit: str, detail: str) -> None:
        super().__init__(f"{what} {detail}; the limit is set by {limit}. Nothing was changed.")
        self.what = what
        self.limit = limit


def check_value(value: Any, limits: InputLimits = DEFAULT_LIMITS, *, what: str = "the value",
                check_bytes: bool = True) -> None:
    """Raise :class:`InputTooLarge` when ``value`` nests deeper than ``limits.max_depth``, holds
    more than ``limits.max_items`` items, or (``check_bytes``) is bigger than
    ``limits.max_bytes`` written as JSON."""
    depth, items = _shape(value, limits)
    if depth > limits.max_depth:
        raise InputTooLarge(what, DEPTH_SETTING,
                            f"nests more than {limits.max_depth} levels deep")
    if items > limits.max_items:
        raise InputTooLarge(what, ITEMS_SETTING,
                            f"holds more than {limits.max_items:,} items")
    if check_bytes:
        size = len(json.dumps(value, default=str).encode())
        if size > limits.max_bytes:
            raise InputTooLarge(what, BYTES_SETTING, f"is {size:,} bytes as JSON, more than "
                                                     f"{limits.max_bytes:,}")


def _shape(value: Any, limits: InputLimits) -> tuple[int, int]:
    """(deepest level, items) of ``value``; stops early once past a limit."""
    deepest = 0
    items = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, level = stack.pop()
        if isinstance(v, dict):
            children: Any = v.values()
        elif isinstance(v, (list, tuple, set, frozenset)):
            children = v
        else:
            continue
        level += 1
        deepest = max(deepest, level)
        items += len(v)
        if deepest > limits.max_depth or items > limits.max_items:
            break
        stack.extend((c, level) for c in children)
    return deepest, items


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = re.compile(rb"[\[\]{}]")


def check_json_text(body: bytes, limits: InputLimits = DEFAULT_LIMITS, *,
                    what: str = "the request body") -> None:
    """The depth and item checks of :func:`check_value` on JSON text, before it is parsed
    (a parser meets a deep document with its recursion); the size is the caller's to bound."""
    opened = body.count(b"[") + body.count(b"{")
    if opened <= limits.max_depth and opened + body.count(b",") <= limits.max_items:
        return  # within both whatever the strings hold
    bare = _STRING.sub(b'""', body)
    depth = deepest = 0
    for m in _BRACKETS.finditer(bare):
        if m.group() in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limits.max_depth:
                    raise InputTooLarge(what, DEPTH_SETTING,
                                        f"nests more than {limits.max_depth} levels deep")
        else:
            depth -= 1
    # Every item but a container's first is preceded by a comma: an upper bound of the items.
    items = bare.count(b",") + bare.count(b"[") + bare.count(b"{")
    if items > limits.max_items:
        raise InputTooLarge(what, ITEMS_SETTING, f"holds more than {limits.max_items:,} items")
