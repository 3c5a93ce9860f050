"""The input limits as pure functions: depth, items and size of a value, and depth and items of
JSON text before it is parsed (strings, escaped quotes and brackets in them are text)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from statewright.core.limits import InputLimits, InputTooLarge, check_json_text, check_value

LIMITS = InputLimits(max_depth=4, max_bytes=100, max_items=10)


def deep(levels: int) -> Any:
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.mark.parametrize(("value", "limit"), [
    ({"a": deep(4)}, "STATEWRIGHT_MAX_INPUT_DEPTH"),
    ({"a": list(range(10))}, "STATEWRIGHT_MAX_INPUT_ITEMS"),
    ({"a": "x" * 100}, "STATEWRIGHT_MAX_INPUT_BYTES"),
])
def test_each_limit_is_named(value: Any, limit: str) -> None:
    with pytest.raises(InputTooLarge) as caught:
        check_value(value, LIMITS, what="conf")
    assert caught.value.limit == limit and limit in str(caught.value)
    assert str(caught.value).startswith("conf ")
    if limit != "STATEWRIGHT_MAX_INPUT_BYTES":  # the text's size is the body limit's
        with pytest.raises(InputTooLarge):
            check_json_text(json.dumps(value).encode(), LIMITS)


def test_values_within_the_limits_pass() -> None:
    check_value({"a": deep(3), "b": [1, 2, 3]}, LIMITS)
    check_json_text(json.dumps({"a": deep(3), "b": [1, 2, 3]}).encode(), LIMITS)
    check_value(None, LIMITS)
    check_json_text(b"", LIMITS)


def test_a_value_of_any_depth_is_checked_without_recursion() -> None:
    with pytest.raises(InputTooLarge, match="64 levels"):
        check_value(deep(200_000), InputLimits())
    with pytest.raises(InputTooLarge, match="64 levels"):
        check_json_text(b"[" * 1_000_000, InputLimits())


def test_brackets_commas_and_escaped_quotes_inside_strings_are_text() -> None:
    text = json.dumps({"s": '[[[[[[ "{{{{,,,,,,,,,,,,,,,," \\ ]]'}).encode()
    check_json_text(text, LIMITS)
    # an escaped quote does not end the string: what follows it is still text
    check_json_text(b'{"s": "a\\"[[[[[[[[["}', LIMITS)
    with pytest.raises(InputTooLarge):
        check_json_text(b'{"s": "a\\\\", "t": [[[[[]]]]]}', LIMITS)  # the string ended
