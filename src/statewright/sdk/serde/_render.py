"""Reading serialized data without rebuilding it: for people (``render``) and for the
scheduler (``shape``). Neither imports a class named in the data, and neither fails: a tag
they do not know is shown as it is stored.
"""

from __future__ import annotations

import base64
import math
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from statewright.sdk.serde._core import CLASSNAME, TYPE_KEY

_TABLE_ROWS = 20
"""Rows of a DataFrame or Series shown in a rendering (the stored value keeps them all)."""

_CLASSNAMES = {
    "tuple": "builtins.tuple", "set": "builtins.set", "frozenset": "builtins.frozenset",
    "dict": "builtins.dict", "float": "builtins.float", "bytes": "builtins.bytes",
    "datetime": "datetime.datetime", "date": "datetime.date", "time": "datetime.time",
    "timedelta": "datetime.timedelta", "decimal": "decimal.Decimal", "uuid": "uuid.UUID",
    "timezone": "datetime.tzinfo",
}


def type_name(data: Any) -> str | None:
    """The qualified class name a tagged value stands for; ``None`` for plain JSON data."""
    if type(data) is not dict or TYPE_KEY not in data:
        return None
    kind = data[TYPE_KEY]
    return str(data.get(CLASSNAME) or _CLASSNAMES.get(kind, kind))


def render(data: Any) -> Any:
    """Plain JSON a person reads: a Decimal as its number, a datetime as its ISO form, a
    tuple or set as a list, an object as its fields, a DataFrame as a small table
    (``columns``, ``rows``, ``total_rows``)."""
    kind = type(data)
    if kind is list:
        return [render(item) for item in data]
    if kind is not dict:
        return data
    if TYPE_KEY not in data:
        return {key: render(item) for key, item in data.items()}
    tag = data[TYPE_KEY]
    raw = data.get("value")
    try:
        show = _RENDER.get(tag)
        return show(data, raw) if show is not None else data
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, InvalidOperation):
        return data


def _render_dict(data: dict[str, Any], raw: Any) -> Any:
    if "items" in data:
        return {_key(render(k)): render(v) for k, v in data["items"]}
    return {key: render(item) for key, item in raw.items()}


def _key(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def _render_decimal(data: dict[str, Any], raw: Any) -> Any:
    number = Decimal(raw)
    if not number.is_finite():
        return raw
    if number == number.to_integral_value() and abs(number) < 2 ** 53:
        return int(number)
    as_float = float(number)
    return as_float if math.isfinite(as_float) and Decimal(repr(as_float)) == number else raw


def _render_bytes(data: dict[str, Any], raw: Any) -> str:
    value = base64.b64decode(raw)
    shown = repr(value[:64])
    return shown if len(value) <= 64 else f"{shown}... ({len(value)} bytes)"


def _render_ndarray(data: dict[str, Any], raw: Any) -> Any:
    flat = [render(v) for v in raw]
    for size in reversed(data["shape"][1:]):
        flat = [flat[i:i + size] for i in range(0, len(flat), size)]
    return flat


def _render_table(data: dict[str, Any], raw: Any) -> dict[str, Any]:
    labels = raw["columns"]
    columns = [_key(render(c)) for c in labels["values"]] if isinstance(labels, dict) \
        else [str(i) for i in range(len(raw["data"]))]
    count = len(raw["data"][0]) if raw["data"] else 0
    rows = [[render(col[i]) for col in raw["data"]] for i in range(min(count, _TABLE_ROWS))]
    out: dict[str, Any] = {"columns": columns, "dtypes": raw["dtypes"], "rows": rows,
                           "total_rows": count}
    if raw.get("index") is not None:
        out["index"] = [render(v) for v in raw["index"]["values"][:_TABLE_ROWS]]
    return out


def _render_series(data: dict[str, Any], raw: Any) -> dict[str, Any]:
    name = render(raw["name"])
    return _render_table(data, {"columns": {"values": [name if name is not None else "value"]},
                                "dtypes": [raw["dtype"]], "data": [raw["data"]],
                                "index": raw["index"]})


_RENDER: dict[str, Any] = {
    "dict": _render_dict,
    "tuple": lambda data, raw: [render(v) for v in raw],
    "set": lambda data, raw: [render(v) for v in raw],
    "frozenset": lambda data, raw: [render(v) for v in raw],
    "datetime": lambda data, raw: raw,
    "date": lambda data, raw: raw,
    "time": lambda data, raw: raw,
    "timedelta": lambda data, raw: str(timedelta(seconds=raw)),
    "float": lambda data, raw: {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}[raw],
    "decimal": _render_decimal,
    "uuid": lambda data, raw: raw,
    "bytes": _render_bytes,
    "timezone": lambda data, raw: raw,
    "numpy": lambda data, raw: render(raw),
    "ndarray": _render_ndarray,
    "dataframe": _render_table,
    "series": _render_series,
    "object": lambda data, raw: render(raw),
    # a value the object-storage XCom backend keeps outside the database: where, and its size
    "objectstorage": lambda data, raw: {"stored_at": raw, "bytes": data.get("bytes")},
}


class Opaque:
    """A stored value the scheduler does not rebuild; its class is named after the value's
    type, so that a message about it reads "is a Decimal"."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


_OPAQUE: dict[str, type[Opaque]] = {}


def opaque(name: str) -> Opaque:
    short = name.rpartition(".")[2] or name
    cls = _OPAQUE.get(short)
    if cls is None:
        cls = _OPAQUE[short] = type(short, (Opaque,), {"__slots__": ()})
    return cls()


def shape(data: Any) -> Any:
    """The containers of serialized data as they read back (lists, tuples, dicts, with sets
    as frozensets), every other tagged value as an ``Opaque`` placeholder: what the scheduler
    needs to count the items of a value to map over. A tag that carries an int ``length`` (a
    value stored elsewhere) reads as that many placeholders."""
    kind = type(data)
    if kind is list:
        return [shape(item) for item in data]
    if kind is not dict:
        return data
    if TYPE_KEY not in data:
        return {key: shape(item) for key, item in data.items()}
    tag = data[TYPE_KEY]
    raw = data.get("value")
    if tag == "tuple" and isinstance(raw, list):
        return tuple(shape(v) for v in raw)
    if tag in ("set", "frozenset") and isinstance(raw, list):
        return frozenset(opaque("item") for _ in raw)
    if tag == "dict" and isinstance(raw, dict):
        return {key: shape(item) for key, item in raw.items()}
    if tag == "dict" and isinstance(data.get("items"), list):
        return {_key(render(k)): shape(v) for k, v in data["items"]}
    length = data.get("length")
    if isinstance(length, int) and not isinstance(length, bool) and length >= 0:
        return [opaque("stored value") for _ in range(length)]
    return opaque(type_name(data) or "value")
