"""``serde.deserialize`` builds the path of a value only when it fails: the message still names
the exact key path, through plain and tagged containers, as when every key built its path."""

from __future__ import annotations

from collections import OrderedDict
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from statewright.sdk.serde import SerializationError, deserialize, serialize

_UNKNOWN = ("unknown tag __type='mystery'; the data was written by a newer or different "
            "version, or a dict with a '__type' key was not serialized first")


def _message(data: Any, **kw: Any) -> str:
    with pytest.raises(SerializationError) as info:
        deserialize(data, **kw)
    return str(info.value)


@pytest.mark.parametrize(("data", "where"), [
    ({"__type": "mystery"}, "value"),
    ({"a": {"__type": "mystery"}}, "value['a']"),
    ([1, 2, {"__type": "mystery"}], "value[2]"),
    ({"a": [0, {"b": {"__type": "mystery"}}]}, "value['a'][1]['b']"),
    ({"a": {"__type": "dict", "value": {"__type": {"__type": "mystery"}}}}, "value['a']['__type']"),
    ({"t": {"__type": "tuple", "value": [1, [2, {"__type": "mystery"}]]}}, "value['t'][1][1]"),
    ({"s": {"__type": "frozenset", "value": ["x", {"__type": "mystery"}]}}, "value['s'][1]"),
    ({"k'q": {"__type": "mystery"}}, 'value["k\'q"]'),
])
def test_an_unknown_tag_names_its_exact_path(data: Any, where: str) -> None:
    assert _message(data) == f"{where}: {_UNKNOWN}"


def test_the_first_failing_member_is_named() -> None:
    data = {"ok": 1, "bad1": {"__type": "mystery"}, "bad2": {"__type": "other"}}
    assert _message(data).startswith("value['bad1']: unknown tag __type='mystery'")
    assert _message([1, {"__type": "other"}, {"__type": "mystery"}]).startswith(
        "value[1]: unknown tag __type='other'")


def test_the_given_path_leads() -> None:
    assert _message({"x": [{"__type": "mystery"}]}, path="kwargs of trigger 7") == (
        f"kwargs of trigger 7['x'][0]: {_UNKNOWN}")


def test_a_malformed_value_keeps_its_message_and_cause() -> None:
    with pytest.raises(SerializationError) as info:
        deserialize({"d": [{"__type": "datetime", "value": "yesterday"}]}, path="kwargs")
    assert str(info.value) == (
        "kwargs['d'][0]: malformed 'datetime' value 'yesterday': "
        "Invalid isoformat string: 'yesterday'")
    assert isinstance(info.value.__cause__, ValueError)
    assert _message({"__type": "dict", "value": [1]}) == (
        "value: malformed 'dict' value [1]: 'list' object has no attribute 'items'")
    assert _message({"t": {"__type": "tuple", "value": None}}) == (
        "value['t']: malformed 'tuple' value None: 'NoneType' object is not iterable")
    assert _message({"s": {"__type": "set", "value": [[1]]}}) == (
        "value['s']: malformed 'set' value [[1]]: unhashable type: 'list'")


def test_data_that_is_not_serialized_is_named() -> None:
    assert _message({"a": [1, (2, 3)]}) == (
        "value['a'][1]: object of type tuple is not serialized data; "
        "pass what serialize() returned")
    assert _message(object(), path="p").startswith("p: object of type object is not")


def test_the_success_path_is_unchanged() -> None:
    value = {"at": datetime(2030, 1, 2, tzinfo=UTC), "gap": timedelta(seconds=3),
             "nested": [{"__type": "not a tag here"}, (1, frozenset({2}))], "plain": [1, "x"],
             "none": None, "f": 1.5, "b": True}
    assert deserialize(serialize(value)) == value
    # subclasses of the JSON types are read as before
    assert deserialize(OrderedDict(a=[1])) == {"a": [1]}
    assert deserialize(OrderedDict(a={"__type": "timedelta", "value": 2})) == {
        "a": timedelta(seconds=2)}
    assert _message(OrderedDict(a={"__type": "mystery"})).startswith("value['a']: unknown tag")
