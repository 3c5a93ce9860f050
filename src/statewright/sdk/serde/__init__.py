"""The one serializer of values that cross processes or are stored: XCom values (task return
values, ``ti.xcom_push``), trigger kwargs and event payloads, human-in-the-loop results.

``serialize`` turns a value into JSON data (``json.dumps`` accepts the result, compact and
deterministic); ``deserialize`` turns that data back into an equal value of the same type.
Plain JSON data (``None``, ``bool``, ``int``, finite ``float``, ``str``, lists, dicts with
``str`` keys) is stored as itself. Other values are tagged objects, as in Airflow 3's serde::

    {"__type": "datetime", "value": "2026-01-01T00:00:00+00:00"}
    {"__type": "decimal", "value": "12.50"}
    {"__type": "object", "__classname__": "dags.models.Order", "__version__": 1,
     "value": {"id": 7}}

Supported: tuples, sets, frozensets, dicts with other keys; ``datetime`` (an aware one keeps
its zone), ``date``, ``time``, ``timedelta``, timezones; NaN and infinities; ``Decimal``
(exact), ``UUID``, ``bytes``; NumPy scalars and arrays and pandas DataFrames and Series (when
those libraries are installed); instances of pydantic models, of classes with ``serialize()``
and ``deserialize(data, version)`` (``__version__`` is stored), of dataclasses and attrs
classes. Classes are imported by name on read when the allowed-classes rule lets them
(``statewright.sdk.serde._allowed``). A real dict that holds a ``"__type"`` key is wrapped as
``{"__type": "dict", "value": {...}}`` so that it is never mistaken for a tag.

``render`` shows serialized data as plain JSON for people (the API and UI) and ``shape`` as the
scheduler counts it; neither imports anything.
"""

from __future__ import annotations

import json
from typing import Any

from statewright.sdk.serde._allowed import is_allowed
from statewright.sdk.serde._core import (
    CLASSNAME,
    TYPE_KEY,
    VERSION,
    SerializationError,
    Unreadable,
    Walk,
    deserialize_value,
    serialize_value,
)
from statewright.sdk.serde._render import Opaque, render, shape, type_name

__all__ = [
    "CLASSNAME",
    "TYPE_KEY",
    "VERSION",
    "Opaque",
    "SerializationError",
    "deserialize",
    "dumps",
    "is_allowed",
    "loads",
    "render",
    "serialize",
    "shape",
    "type_name",
]


def serialize(value: Any, *, path: str = "value") -> Any:
    """Return ``value`` as JSON-compatible data; ``path`` names the value in error messages."""
    try:
        data = serialize_value(value, Walk(path))
    except RecursionError:
        raise SerializationError(f"{path}: the value is nested too deeply to be serialized",
                                 type(value).__qualname__) from None
    if type(data) is float:  # a JSON column on SQLite (numeric affinity) reads 15.0 back as 15
        return {TYPE_KEY: "float", "value": data}
    return data


def deserialize(data: Any, *, path: str = "value") -> Any:
    """Return the value that :func:`serialize` turned into ``data``; ``path`` names the value
    in error messages (``path['key'][0]: ...``, built only when there is an error)."""
    try:
        return deserialize_value(data)
    except Unreadable as exc:
        where = path + "".join(reversed(exc.steps))
        raise SerializationError(f"{where}: {exc.message}") from exc.__cause__


def dumps(value: Any) -> str:
    """Serialize ``value`` and encode it as a compact JSON string."""
    return json.dumps(serialize(value), separators=(",", ":"), sort_keys=True)


def loads(text: str | bytes) -> Any:
    """Decode a JSON string written by :func:`dumps` and deserialize it."""
    return deserialize(json.loads(text))
