"""The one serializer (statewright.sdk.serde) on the types XCom values take: each round trip
keeps the type and the value, the stored form is compact deterministic JSON, a class is read
back only when allowed, and the readable rendering and the scheduler's shape never import."""

from __future__ import annotations

import dataclasses
import json
import math
import uuid
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any, ClassVar
from zoneinfo import ZoneInfo

import attrs
import numpy as np
import pandas as pd
import pydantic
import pytest

from statewright.sdk import serde
from statewright.sdk.serde import SerializationError, deserialize, dumps, render, serialize, shape


@dataclasses.dataclass
class Point:
    x: int
    y: Decimal


@dataclasses.dataclass
class Route:
    name: str
    stops: list[Point]
    start: Point
    legs: tuple[int, ...] = ()


@attrs.define
class Parcel:
    weight: float
    _label: str = "none"


class Invoice(pydantic.BaseModel):
    number: int
    total: Decimal
    issued: datetime


class Versioned:
    """Airflow's protocol: serialize() and deserialize(data, version), with __version__."""

    __version__: ClassVar[int] = 2

    def __init__(self, value: int) -> None:
        self.value = value

    def serialize(self) -> dict[str, Any]:
        return {"v": self.value}

    @classmethod
    def deserialize(cls, data: dict[str, Any], version: int) -> Versioned:
        assert version == 2
        return cls(data["v"])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Versioned) and other.value == self.value

    __hash__ = None  # type: ignore[assignment]


def _round_trip(value: Any) -> Any:
    data = serialize(value)
    text = json.dumps(data, allow_nan=False)  # the stored form is JSON
    return deserialize(json.loads(text))


SIMPLE = [
    Decimal("12.50"), Decimal("-0.000001"), Decimal("1E+30"), uuid.UUID(int=7), b"\x00\xffbin",
    (1, "a", (2,)), {1, 2}, frozenset({"a"}), date(2026, 1, 2), time(3, 4, 5),
    timedelta(days=1, seconds=2.5), datetime(2026, 1, 2, 3, 4, tzinfo=ZoneInfo("Europe/Paris")),
    datetime(2026, 1, 2, 3, 4), {("a", 1): "tuple key", 2: "int key"}, ZoneInfo("Asia/Tokyo"),
    timezone(timedelta(hours=-3)), 1.5, "x", None, True, [1, [2, {"a": 3}]],
]


@pytest.mark.parametrize("value", SIMPLE, ids=lambda v: type(v).__name__)
def test_builtin_and_library_types_round_trip_with_their_types(value: Any) -> None:
    back = _round_trip(value)
    assert back == value and type(back) is type(value)


def test_non_finite_floats_are_tagged_not_invalid_json() -> None:
    data = serialize([math.inf, -math.inf, math.nan])
    json.dumps(data, allow_nan=False)
    back = deserialize(data)
    assert back[:2] == [math.inf, -math.inf] and math.isnan(back[2])


def test_an_aware_datetime_keeps_its_zone() -> None:
    moment = datetime(2026, 3, 28, 12, tzinfo=ZoneInfo("Europe/Paris"))
    back = _round_trip(moment)
    assert back.tzinfo == ZoneInfo("Europe/Paris")
    assert (back + timedelta(days=1)).utcoffset() == timedelta(hours=2)  # DST followed


def test_decimal_is_exact_and_its_form_readable() -> None:
    assert serialize(Decimal("0.1")) == {"__type": "decimal", "value": "0.1"}
    assert _round_trip(Decimal("3.14159265358979323846264338327950288")) == Decimal(
        "3.14159265358979323846264338327950288")


def test_dataclasses_attrs_pydantic_and_the_serialize_protocol_round_trip() -> None:
    route = Route("r", [Point(1, Decimal("2.5"))], Point(0, Decimal(0)), (3, 4))
    back = _round_trip(route)
    assert back == route and isinstance(back.stops[0], Point) and isinstance(back.legs, tuple)
    assert _round_trip(Parcel(2.5, "fragile")) == Parcel(2.5, "fragile")
    invoice = Invoice(number=1, total=Decimal("9.99"), issued=datetime(2026, 1, 1, tzinfo=UTC))
    assert _round_trip(invoice) == invoice
    data = serialize(Versioned(5))
    assert data == {"__type": "object", "__classname__": f"{__name__}.Versioned",
                    "__version__": 2, "value": {"v": 5}}
    assert _round_trip(Versioned(5)) == Versioned(5)


def test_a_newer_version_than_the_class_is_refused() -> None:
    data = serialize(Point(1, Decimal(1)))
    data["__version__"] = 3
    with pytest.raises(SerializationError, match="version 3, newer than the class's"):
        deserialize(data)


def test_a_class_defined_in_a_function_cannot_be_stored() -> None:
    @dataclasses.dataclass
    class Local:
        a: int

    with pytest.raises(SerializationError, match="defined inside a function"):
        serialize({"x": Local(1)})


def test_numpy_scalars_and_arrays_round_trip() -> None:
    for scalar in (np.int64(7), np.float32(1.5), np.bool_(True), np.float64("nan")):
        back = _round_trip(scalar)
        assert type(back) is type(scalar)
        assert back == scalar or (np.isnan(back) and np.isnan(scalar))
    for array in (np.arange(6, dtype=np.int32).reshape(2, 3), np.array([1.5, np.nan]),
                  np.array(["a", "bc"]), np.array([Decimal(1), None], dtype=object),
                  np.array(["2026-01-01", "NaT"], dtype="datetime64[ns]")):
        back = _round_trip(array)
        assert back.dtype == array.dtype and back.shape == array.shape
        np.testing.assert_array_equal(back, array)


def test_pandas_frames_and_series_round_trip_exactly() -> None:
    frame = pd.DataFrame({
        "id": [1, 2, 3], "price": [0.1 + 0.2, float("nan"), 1e-17],
        "name": ["a", None, "c"], "amount": [Decimal("1.10"), Decimal("2"), None],
        "at": pd.to_datetime(["2026-01-01", None, "2026-01-03"]).tz_localize("UTC"),
        "flag": [True, False, True], "kind": pd.Categorical(["x", "y", "x"]),
    }, index=pd.Index(["r1", "r2", "r3"], name="row"))
    back = _round_trip(frame)
    pd.testing.assert_frame_equal(back, frame)
    assert back["price"].iloc[0] == 0.1 + 0.2  # every digit kept
    series = pd.Series([1.5, 2.5], name="s", index=pd.MultiIndex.from_tuples([(1, "a"), (2, "b")]))
    pd.testing.assert_series_equal(_round_trip(series), series)
    plain = pd.DataFrame({"a": [1, 2]})
    pd.testing.assert_frame_equal(_round_trip(plain), plain)


def test_the_stored_form_is_compact_and_deterministic() -> None:
    value = {"s": {3, 1, 2}, "d": Decimal("1.0"), "t": (1, 2)}
    assert dumps(value) == dumps({"t": (1, 2), "d": Decimal("1.0"), "s": {2, 3, 1}})
    assert " " not in dumps(value)
    frame = pd.DataFrame({"a": [1.5, 2.5]})
    assert dumps(frame) == dumps(frame.copy())


def test_a_value_that_cannot_be_stored_names_its_type_and_place() -> None:
    with pytest.raises(SerializationError) as info:
        serialize({"rows": [1, lambda: 2]})
    assert str(info.value).startswith("value['rows'][1]: object of type function cannot be")
    assert info.value.type_name == "function"


def test_classes_are_read_back_only_when_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Installed packages are not your own code: a pattern must allow them (Airflow's rule).
    foreign = {"__type": "object", "__classname__": "pydantic.main.BaseModel",
               "__version__": 0, "value": {}}
    with pytest.raises(SerializationError, match=r"pydantic\.main\.BaseModel is not allowed"):
        deserialize(foreign)
    monkeypatch.setenv("STATEWRIGHT_ALLOWED_DESERIALIZATION_CLASSES", "pydantic.main.*")
    with pytest.raises(SerializationError, match="cannot be instantiated directly"):
        deserialize(foreign)  # imported this time: the class itself refuses
    # This test module is your own code: allowed by default, refused with the rule turned off;
    # so is __main__ (a script, `python -c`, a notebook), which has no file to look at.
    assert serde.is_allowed(f"{__name__}.Point")
    assert serde.is_allowed("__main__.Row")
    monkeypatch.setenv("STATEWRIGHT_DESERIALIZE_OWN_MODULES", "false")
    assert not serde.is_allowed(f"{__name__}.Point")
    monkeypatch.setenv("STATEWRIGHT_ALLOWED_DESERIALIZATION_CLASSES_REGEXP", r"test_xcom_\w+\.")
    assert serde.is_allowed(f"{__name__}.Point")
    assert not serde.is_allowed("subprocess.Popen")


def test_render_is_readable_json_without_imports() -> None:
    data = serialize({"total": Decimal("12.50"), "big": Decimal("0.1000000000000000000001"),
                      "when": datetime(2026, 1, 1, tzinfo=UTC), "pair": (1, 2),
                      "point": Point(1, Decimal("2")), "blob": b"ab", "n": np.int64(3),
                      "grid": np.arange(4).reshape(2, 2), "nan": math.nan})
    assert render(data) == {
        "total": 12.5, "big": "0.1000000000000000000001", "when": "2026-01-01T00:00:00+00:00",
        "pair": [1, 2], "point": {"x": 1, "y": 2}, "blob": "b'ab'", "n": 3,
        "grid": [[0, 1], [2, 3]], "nan": "NaN"}
    # a class that cannot be imported here is shown by its fields all the same
    assert render({"__type": "object", "__classname__": "nowhere.Thing", "__version__": 0,
                   "value": {"a": (1,)}}) == {"a": (1,)}
    frame = serialize(pd.DataFrame({"a": list(range(30)), "b": ["x"] * 30}))
    table = render(frame)
    assert table["columns"] == ["a", "b"] and table["total_rows"] == 30
    assert len(table["rows"]) == 20 and table["rows"][1] == [1, "x"]
    assert serde.type_name(frame) == "pandas.core.frame.DataFrame"
    assert serde.type_name(serialize(Decimal(1))) == "decimal.Decimal"
    assert serde.type_name([1]) is None
    assert render({"__type": "mystery", "value": 1}) == {"__type": "mystery", "value": 1}


def test_shape_counts_containers_and_hides_everything_else() -> None:
    assert shape(serialize((1, Decimal(2)))) == (1, shape(serialize(Decimal(2))))
    assert type(shape(serialize(Decimal(2)))).__name__ == "Decimal"
    assert shape(serialize({"__type": "x", "k": [1, 2]}))["k"] == [1, 2]
    assert len(shape({"__type": "objectstorage", "value": "file:///x", "length": 4})) == 4
    assert isinstance(shape(serialize({1, 2})), frozenset)


def test_trigger_event_payloads_and_kwargs_use_the_same_serializer() -> None:
    from statewright.sdk.triggers.base import TriggerEvent

    payload = {"total": Decimal("3.50"), "route": Route("r", [], Point(1, Decimal(1)))}
    back = TriggerEvent.from_data(json.loads(json.dumps(TriggerEvent(payload).to_data())))
    assert back.payload == payload and isinstance(back.payload["route"], Route)
    with pytest.raises(SerializationError, match=r"TriggerEvent\.payload\['f'\]: object of type"):
        TriggerEvent({"f": open})


def test_a_float_standing_alone_stays_a_float_through_a_sqlite_json_column() -> None:
    """SQLite gives a JSON column numeric affinity: the text 15.0 would read back as 15."""
    from sqlalchemy import JSON, Column, Integer, MetaData, Table, create_engine, select

    table = Table("values_", MetaData(), Column("id", Integer, primary_key=True),
                  Column("value", JSON))
    engine = create_engine("sqlite://")
    table.metadata.create_all(engine)
    with engine.begin() as conn:
        for i, value in enumerate([15.0, 2.5, 15, [15.0], {"x": 15.0}]):
            conn.execute(table.insert().values(id=i, value=serde.serialize(value)))
        read = [serde.deserialize(v) for (v,) in conn.execute(select(table.c.value)
                                                               .order_by(table.c.id))]
    engine.dispose()
    assert read == [15.0, 2.5, 15, [15.0], {"x": 15.0}]
    assert [type(v) for v in read[:3]] == [float, float, int]
    assert type(read[3][0]) is float and type(read[4]["x"]) is float
