"""A JSON-compatible round trip for trigger kwargs and trigger event payloads.

``serialize`` turns a value into plain JSON data (``json.dumps`` accepts the result);
``deserialize`` turns that data back into an equal value. Supported: ``None``, ``bool``,
``int``, ``float``, ``str``, ``list``, ``tuple``, ``dict`` with ``str`` keys, ``set``,
``frozenset``, ``datetime`` (an aware one keeps its timezone), ``date``, ``time`` and
``timedelta``, nested to any depth.

Values JSON has no form for are written as tagged objects::

    {"__type": "datetime", "value": "2026-01-01T00:00:00+00:00"}

A real dict that happens to hold a ``"__type"`` key is wrapped as
``{"__type": "dict", "value": {...}}`` so that it is never mistaken for a tag.
"""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from statewright.core.errors import StatewrightError

__all__ = ["TYPE_KEY", "SerializationError", "deserialize", "dumps", "loads", "serialize"]

TYPE_KEY = "__type"

_HINT = "use plain data, datetimes or timedeltas"


class SerializationError(StatewrightError, TypeError):
    """A value that cannot be written as (or read back from) JSON data."""


def serialize(value: Any, *, path: str = "value") -> Any:
    """Return ``value`` as JSON-compatible data; ``path`` names the value in error messages."""
    return _serialize(value, path, set())


def deserialize(data: Any, *, path: str = "value") -> Any:
    """Return the value that :func:`serialize` turned into ``data``; ``path`` names the value
    in error messages (``path['key'][0]: ...``, built only when there is an error)."""
    try:
        return _deserialize(data)
    except _Unreadable as exc:
        where = path + "".join(reversed(exc.steps))
        raise SerializationError(f"{where}: {exc.message}") from exc.__cause__


def dumps(value: Any) -> str:
    """Serialize ``value`` and encode it as a compact JSON string."""
    return json.dumps(serialize(value), separators=(",", ":"), sort_keys=True)


def loads(text: str | bytes) -> Any:
    """Decode a JSON string written by :func:`dumps` and deserialize it."""
    return deserialize(json.loads(text))


def _serialize(value: Any, path: str, seen: set[int]) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, datetime):
        return _tag_datetime(value)
    if isinstance(value, date):
        return {TYPE_KEY: "date", "value": value.isoformat()}
    if isinstance(value, time):
        if value.tzinfo is not None:
            raise SerializationError(
                f"{path}: a time of day with a timezone cannot be serialized; "
                "use an aware datetime instead"
            )
        return {TYPE_KEY: "time", "value": value.isoformat()}
    if isinstance(value, timedelta):
        return {TYPE_KEY: "timedelta", "value": value.total_seconds()}
    if isinstance(value, list | tuple | set | frozenset | dict):
        return _serialize_container(value, path, seen)
    raise SerializationError(
        f"{path}: object of type {type(value).__qualname__} cannot be serialized; {_HINT}"
    )


def _serialize_container(value: Any, path: str, seen: set[int]) -> Any:
    if id(value) in seen:
        raise SerializationError(f"{path}: the value contains itself and cannot be serialized")
    seen.add(id(value))
    try:
        if isinstance(value, dict):
            return _serialize_dict(value, path, seen)
        items = [_serialize(item, f"{path}[{i}]", seen) for i, item in enumerate(value)]
        if isinstance(value, list):
            return items
        if isinstance(value, tuple):
            return {TYPE_KEY: "tuple", "value": items}
        # Sets have no order; sort the members so that equal sets give equal JSON.
        items.sort(key=lambda item: json.dumps(item, sort_keys=True))
        kind = "frozenset" if isinstance(value, frozenset) else "set"
        return {TYPE_KEY: kind, "value": items}
    finally:
        seen.discard(id(value))


def _serialize_dict(value: dict[Any, Any], path: str, seen: set[int]) -> Any:
    out: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise SerializationError(
                f"{path}: dict key {key!r} of type {type(key).__qualname__} cannot be "
                "serialized; dict keys must be strings"
            )
        out[str(key)] = _serialize(item, f"{path}[{key!r}]", seen)
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


class _Unreadable(Exception):
    """Raised inside the deserializer; :func:`deserialize` turns it into a
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


def _deserialize(data: Any) -> Any:
    kind = type(data)
    if kind in _PLAIN:
        return data
    if kind is dict:
        if TYPE_KEY in data:
            return _untag(data)
        try:
            return {key: item if type(item) in _PLAIN else _deserialize(item)
                    for key, item in data.items()}
        except _Unreadable:
            _locate(data.items(), repr)
            raise
    if kind is list:
        try:
            return [item if type(item) in _PLAIN else _deserialize(item) for item in data]
        except _Unreadable:
            _locate(enumerate(data), str)
            raise
    if isinstance(data, bool | int | float | str):  # subclasses: as before
        return data
    if isinstance(data, list):
        return _deserialize(list(data))
    if isinstance(data, dict):
        return _deserialize(dict(data))
    raise _Unreadable(
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
            _deserialize(item)
        except _Unreadable as exc:
            exc.steps.append(f"[{show(label)}]")
            raise


def _untag(data: dict[str, Any]) -> Any:
    kind = data[TYPE_KEY]
    raw: Any = data.get("value")
    try:
        if kind == "dict":
            items = raw.items()
            try:
                return {key: _deserialize(item) for key, item in items}
            except _Unreadable:
                _locate(items, repr)
                raise
        if kind in ("tuple", "set", "frozenset"):
            try:
                members = [_deserialize(item) for item in raw]
            except _Unreadable:
                _locate(enumerate(raw), str)
                raise
            return {"tuple": tuple, "set": set, "frozenset": frozenset}[kind](members)
        if kind == "datetime":
            moment = datetime.fromisoformat(raw)
            if "tz" in data:
                moment = moment.astimezone(ZoneInfo(data["tz"]))
            return moment
        if kind == "date":
            return date.fromisoformat(raw)
        if kind == "time":
            return time.fromisoformat(raw)
        if kind == "timedelta":
            return timedelta(seconds=raw)
    except _Unreadable:
        raise
    except (TypeError, ValueError, AttributeError, ZoneInfoNotFoundError) as exc:
        raise _Unreadable(f"malformed {kind!r} value {raw!r}: {exc}") from exc
    raise _Unreadable(
        f"unknown tag {TYPE_KEY}={kind!r}; the data was written by a newer or "
        "different version, or a dict with a '__type' key was not serialized first"
    )
