from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from statewright.sdk.serde import SerializationError, deserialize, dumps, loads, serialize


def _round_trip(value):
    data = serialize(value)
    # The data survives a real JSON encode/decode.
    return deserialize(json.loads(json.dumps(data)))


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -17,
        2**70,
        1.5,
        "",
        "héllo",
        [],
        [1, "a", None],
        (),
        (1, (2, 3)),
        {},
        {"a": 1, "b": [1, 2, {"c": (3, 4)}]},
        {1.5, 2.5},
        frozenset({"x", "y"}),
        datetime(2026, 3, 1, 12, 30, 15, 123456, tzinfo=UTC),
        datetime(2026, 3, 1, 12, 30, tzinfo=timezone(timedelta(hours=-5, minutes=-30))),
        datetime(2026, 3, 1, 12, 30),
        date(2026, 3, 1),
        time(8, 15, 30, 5),
        timedelta(days=3, seconds=7, microseconds=11),
        timedelta(seconds=-1.5),
    ],
)
def test_round_trip_gives_an_equal_value_of_the_same_type(value):
    back = _round_trip(value)
    assert back == value
    assert type(back) is type(value)


def test_nested_structure_round_trips():
    value = {
        "when": datetime(2026, 1, 1, tzinfo=UTC),
        "waits": [timedelta(minutes=5), (date(2026, 1, 2), {"deep": [None, True, 3.25]})],
        "tags": {"a", "b"},
    }
    back = _round_trip(value)
    assert back == value
    assert isinstance(back["waits"][1], tuple)
    assert isinstance(back["waits"][0], timedelta)


def test_aware_datetime_keeps_its_timezone():
    offset = timezone(timedelta(hours=2))
    back = _round_trip(datetime(2026, 6, 1, 8, 0, tzinfo=offset))
    assert back.utcoffset() == timedelta(hours=2)

    paris = _round_trip(datetime(2026, 6, 1, 8, 0, tzinfo=ZoneInfo("Europe/Paris")))
    assert paris.tzinfo == ZoneInfo("Europe/Paris")
    assert paris.hour == 8

    naive = _round_trip(datetime(2026, 6, 1, 8, 0))
    assert naive.tzinfo is None


def test_real_dict_with_a_type_key_is_escaped():
    value = {"__type": "datetime", "value": "not a date"}
    data = serialize(value)
    assert data["__type"] == "dict"
    assert _round_trip(value) == value
    nested = {"outer": [{"__type": "tuple", "value": [1]}]}
    assert _round_trip(nested) == nested


def test_serialized_data_is_plain_json():
    data = serialize({"t": (1, 2), "d": datetime(2026, 1, 1, tzinfo=UTC)})
    assert data == {
        "t": {"__type": "tuple", "value": [1, 2]},
        "d": {"__type": "datetime", "value": "2026-01-01T00:00:00+00:00"},
    }


def test_equal_sets_give_equal_json():
    assert dumps({"b", "a", "c"}) == dumps({"c", "a", "b"})
    assert loads(dumps({"b", "a"})) == {"a", "b"}


class Foo:
    pass


def test_unsupported_type_names_the_path():
    with pytest.raises(SerializationError) as info:
        serialize({"a": [1, 2, Foo()]}, path="kwargs")
    message = str(info.value)
    assert message.startswith("kwargs['a'][2]: object of type Foo cannot be serialized")
    assert "plain data, datetimes or timedeltas" in message
    assert isinstance(info.value, TypeError)


def test_functions_cannot_be_serialized():
    with pytest.raises(SerializationError, match=r"value\['check'\]: object of type function"):
        serialize({"check": lambda: True})


def test_non_string_dict_keys_round_trip_as_pairs():
    value = {"x": {1: "one", (2, 3): "pair"}}
    assert serialize(value)["x"]["items"][0] == [1, "one"]
    back = _round_trip(value)
    assert back == value and list(back["x"]) == [1, (2, 3)]


def test_a_value_that_contains_itself_is_rejected():
    loop: list = [1]
    loop.append(loop)
    with pytest.raises(SerializationError, match="contains itself"):
        serialize(loop)


def test_shared_but_acyclic_values_are_fine():
    shared = [1, 2]
    assert _round_trip({"a": shared, "b": shared}) == {"a": [1, 2], "b": [1, 2]}


def test_unknown_tag_is_an_error():
    with pytest.raises(SerializationError, match="unknown tag __type='mystery'"):
        deserialize({"x": {"__type": "mystery", "value": 1}})


def test_malformed_tagged_value_is_an_error():
    with pytest.raises(SerializationError, match=r"value\['d'\]: malformed 'datetime'"):
        deserialize({"d": {"__type": "datetime", "value": "yesterday"}})
