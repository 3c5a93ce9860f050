"""The walk over a value: plain JSON data as itself, everything else as a tagged object.

The types that have their own tag (decimals, numpy, pandas, classes) are in ``_types`` and
``_objects``; this module handles the built-in ones and the containers, and turns errors on the
way in into messages that name the path to the value that failed.
"""

from __future__ import annotations

import json
import math
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from statewright.core.errors import StatewrightError

TYPE_KEY = "__type"
CLASSNAME = "__classname__"
VERSION = "__version__"

_HINT = ("use plain data, datetimes or timedeltas, a supported type (Decimal, UUID, bytes, "
         "dataclass, attrs or pydantic classes, NumPy and pandas values) or give the class "
         "serialize() and deserialize(data, version) methods")


class SerializationError(StatewrightError, TypeError):
    """A value that cannot be written as (or read back from) JSON data.

    ``type_name`` names the type of the value that could not be written, when that is what
    failed."""

    def __init__(self, message: str, type_name: str | None = None) -> None:
        super().__init__(message)
        self.type_name = type_name


class Walk:
    """One serialization: where in the value it is (for messages, formatted only when one is
    written), and the containers being written (a value that contains itself is refused)."""

    __slots__ = ("root", "seen", "steps")

    def __init__(self, path: str) -> None:
        self.root = path
        self.steps: list[tuple[Any, bool]] = []
        self.seen: set[int] = set()

    @property
    def path(self) -> str:
        return self.root + "".join(f"[{key}]" if index else f"[{key!r}]"
                                   for key, index in self.steps)

    def inner(self, value: Any, key: Any = None, index: bool = False) -> Any:
        """Serialize ``value``, a member of the value being written: item ``key`` of a dict,
        or of a list when ``index``; ``key=None`` for data of the value itself."""
        if type(value) in _LEAVES:
            return value
        if key is None and not index:
            return serialize_value(value, self)
        self.steps.append((key, index))
        try:
            return serialize_value(value, self)
        finally:
            self.steps.pop()


_LEAVES = frozenset({type(None), bool, int, str})
"""Types written as themselves without a look (a float may be NaN)."""


def serialize_value(value: Any, walk: Walk) -> Any:
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if kind is float:
        return value if math.isfinite(value) else {TYPE_KEY: "float", "value": repr(value)}
    if kind in (list, tuple, set, frozenset, dict):
        return _serialize_container(value, walk)
    if isinstance(value, datetime):
        return _tag_datetime(value)
    if isinstance(value, date):
        return {TYPE_KEY: "date", "value": value.isoformat()}
    if isinstance(value, time):
        if value.tzinfo is not None:
            raise SerializationError(
                f"{walk.path}: a time of day with a timezone cannot be serialized; "
                "use an aware datetime instead", "time")
        return {TYPE_KEY: "time", "value": value.isoformat()}
    if isinstance(value, timedelta):
        return {TYPE_KEY: "timedelta", "value": value.total_seconds()}
    from statewright.sdk.serde import _objects, _types

    tagged = _types.encode(value, walk)
    if tagged is not None:
        return tagged
    if isinstance(value, bool | int | float | str):  # subclasses: IntEnum, StrEnum, ...
        return serialize_value(_primitive(value), walk)
    if isinstance(value, list | tuple | set | frozenset | dict):
        return _serialize_container(value, walk)
    tagged = _objects.encode(value, walk)
    if tagged is not None:
        return tagged
    raise SerializationError(
        f"{walk.path}: object of type {kind.__qualname__} cannot be serialized; {_HINT}",
        kind.__qualname__)


def _primitive(value: Any) -> Any:
    for base in (bool, int, float, str):
        if isinstance(value, base):
            return base(value)
    return value


def _serialize_container(value: Any, walk: Walk) -> Any:
    if id(value) in walk.seen:
        raise SerializationError(
            f"{walk.path}: the value contains itself and cannot be serialized")
    walk.seen.add(id(value))
    try:
        if isinstance(value, dict):
            return _serialize_dict(value, walk)
        items = [item if type(item) in _LEAVES else walk.inner(item, i, True)
                 for i, item in enumerate(value)]
        if isinstance(value, list):
            return items
        if isinstance(value, tuple):
            return {TYPE_KEY: "tuple", "value": items}
        # Sets have no order; sort the members so that equal sets give equal JSON.
        items.sort(key=lambda item: json.dumps(item, sort_keys=True))
        kind = "frozenset" if isinstance(value, frozenset) else "set"
        return {TYPE_KEY: kind, "value": items}
    finally:
        walk.seen.discard(id(value))


def _serialize_dict(value: dict[Any, Any], walk: Walk) -> Any:
    if not all(type(key) is str for key in value):
        # Keys JSON cannot hold (ints, tuples, dates...): the dict as its [key, value] pairs.
        pairs = [[walk.inner(key, key), walk.inner(item, key)]
                 for key, item in value.items()]
        return {TYPE_KEY: "dict", "items": pairs}
    out = {key: item if type(item) in _LEAVES else walk.inner(item, key)
           for key, item in value.items()}
    if TYPE_KEY in out:
        return {TYPE_KEY: "dict", "value": out}
    return out


def _tag_datetime(value: datetime) -> dict[str, Any]:
    tagged: dict[str, Any] = {TYPE_KEY: "datetime", "value": value.isoformat()}
    zone = value.tzinfo
    if isinstance(zone, ZoneInfo) and zone.key:
        # The ISO form keeps only the offset; keep the zone name too, so that arithmetic
        # across a daylight saving change still follows the zone's rules.
        tagged["tz"] = zone.key
    return tagged


class Unreadable(Exception):
    """Raised inside the deserializer; ``deserialize`` turns it into a
    :class:`SerializationError` whose message names the path to the value that failed.

    The path is built only then: on the way out, each container the error passes through adds
    its key or index (innermost first). The success path builds no string at all.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.steps: list[str] = []


_PLAIN = frozenset({type(None), bool, int, float, str})
"""Types that deserialize as themselves (``type(x) in`` is cheaper than ``isinstance``)."""


def deserialize_value(data: Any) -> Any:
    kind = type(data)
    if kind in _PLAIN:
        return data
    if kind is dict:
        if TYPE_KEY in data:
            return _untag(data)
        try:
            return {key: item if type(item) in _PLAIN else deserialize_value(item)
                    for key, item in data.items()}
        except Unreadable:
            _locate(data.items(), repr)
            raise
    if kind is list:
        try:
            return [item if type(item) in _PLAIN else deserialize_value(item) for item in data]
        except Unreadable:
            _locate(enumerate(data), str)
            raise
    if isinstance(data, bool | int | float | str):  # subclasses: as before
        return data
    if isinstance(data, list):
        return deserialize_value(list(data))
    if isinstance(data, dict):
        return deserialize_value(dict(data))
    raise Unreadable(
        f"object of type {type(data).__qualname__} is not serialized data; "
        "pass what serialize() returned"
    )


def _locate(labelled: Any, show: Any) -> None:
    """Find the first member that fails (again) and raise its error with this step added.

    Called only while an error is on its way out: deserializing is deterministic, so the
    member that failed in the comprehension fails again here, and is the first to.
    """
    for label, item in labelled:
        try:
            deserialize_value(item)
        except Unreadable as exc:
            exc.steps.append(f"[{show(label)}]")
            raise


def members(raw: Any) -> list[Any]:
    """The deserialized members of a tagged list (its errors located by index)."""
    try:
        return [deserialize_value(item) for item in raw]
    except Unreadable:
        _locate(enumerate(raw), str)
        raise


def _untag(data: dict[str, Any]) -> Any:
    kind = data[TYPE_KEY]
    raw: Any = data.get("value")
    try:
        read = _BUILTIN.get(kind)
        if read is not None:
            return read(data, raw)
        from statewright.sdk.serde import _objects, _types

        reader = _types.READERS.get(kind) or _objects.READERS.get(kind)
        if reader is not None:
            return reader(data, raw)
    except Unreadable:
        raise
    except SerializationError as exc:
        raise Unreadable(str(exc)) from exc
    except (TypeError, ValueError, AttributeError, KeyError, ZoneInfoNotFoundError) as exc:
        raise Unreadable(f"malformed {kind!r} value {raw!r}: {exc}") from exc
    raise Unreadable(
        f"unknown tag {TYPE_KEY}={kind!r}; the data was written by a newer or "
        "different version, or a dict with a '__type' key was not serialized first"
    )


def _read_dict(data: dict[str, Any], raw: Any) -> Any:
    if "items" in data:
        pairs = data["items"]
        return {_hashable(deserialize_value(k)): deserialize_value(v) for k, v in pairs}
    items = raw.items()
    try:
        return {key: deserialize_value(item) for key, item in items}
    except Unreadable:
        _locate(items, repr)
        raise


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def _read_datetime(data: dict[str, Any], raw: Any) -> datetime:
    moment = datetime.fromisoformat(raw)
    if "tz" in data:
        moment = moment.astimezone(ZoneInfo(data["tz"]))
    return moment


def _read_float(data: dict[str, Any], raw: Any) -> float:
    if type(raw) in (int, float):  # a float standing alone (kept a float on SQLite too)
        return float(raw)
    if raw not in ("nan", "inf", "-inf"):
        raise ValueError("expected 'nan', 'inf' or '-inf'")
    return float(raw)


_BUILTIN: dict[str, Any] = {
    "dict": _read_dict,
    "tuple": lambda data, raw: tuple(members(raw)),
    "set": lambda data, raw: set(members(raw)),
    "frozenset": lambda data, raw: frozenset(members(raw)),
    "datetime": _read_datetime,
    "date": lambda data, raw: date.fromisoformat(raw),
    "time": lambda data, raw: time.fromisoformat(raw),
    "timedelta": lambda data, raw: timedelta(seconds=raw),
    "float": _read_float,
}
