"""Assets as data: URI rules, asset conditions (``a & b``, ``a | (b & c)``) and their evaluation.

Pure functions (no I/O). A condition is stored as JSON:

* ``{"asset": {"name": ..., "uri": ...}}`` — one asset;
* ``{"alias": "name"}`` — an asset alias, true when any asset it resolved to is ready;
* ``{"all": [...]}`` / ``{"any": [...]}`` — every / at least one of the nested conditions.

URI validation and normalisation follow Apache Airflow 3's ``_sanitize_uri``: a value without a
scheme is kept as is; a scheme is lower-cased; ``x-`` schemes are kept verbatim; the ``airflow``
scheme is reserved; user info with a password is dropped; the query is sorted; trailing slashes
and the fragment go. Names and URIs are at most 1,500 characters and not blank.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.core.timetables import NullTimetable

__all__ = [
    "MAX_IDENTIFIER_LENGTH",
    "AssetDefinitionError",
    "AssetTriggeredTimetable",
    "alias_names",
    "asset_names",
    "describe_condition",
    "evaluate",
    "pending",
    "sanitize_uri",
    "validate_condition",
    "validate_identifier",
]

MAX_IDENTIFIER_LENGTH = 1500
_RESERVED_NAMES = frozenset({"self", "context"})


class AssetDefinitionError(DagDefinitionError, ValueError):
    """An asset, alias or asset condition that cannot be accepted (a ValueError, as in Airflow)."""


def validate_identifier(value: Any, what: str, *, allow_empty: bool = False) -> str:
    """A name, URI or group: a str of at most 1,500 characters, not only whitespace."""
    if not isinstance(value, str):
        raise AssetDefinitionError(f"{what} must be a string, got {type(value).__name__}.")
    if len(value) > MAX_IDENTIFIER_LENGTH:
        raise AssetDefinitionError(
            f"{what} cannot exceed {MAX_IDENTIFIER_LENGTH} characters (it has {len(value)}).")
    if value and value.isspace():
        raise AssetDefinitionError(f"{what} cannot be just whitespace.")
    if not value and not allow_empty:
        raise AssetDefinitionError(f"{what} cannot be empty.")
    return value


def validate_asset_name(value: Any) -> str:
    name = validate_identifier(value, "Asset name")
    if name in _RESERVED_NAMES:
        raise AssetDefinitionError(
            f"prohibited name for asset: {name!r} ('self' and 'context' are reserved).")
    return name


def sanitize_uri(value: Any) -> str:
    """The normalised form of an asset URI; AssetDefinitionError naming what is wrong."""
    uri = validate_identifier(value if not hasattr(value, "__fspath__") else str(value),
                              "Asset URI")
    try:
        parsed = urllib.parse.urlsplit(uri)
    except ValueError as exc:
        raise AssetDefinitionError(f"Asset URI {uri!r} is not a valid URI: {exc}.") from None
    if not parsed.scheme and not parsed.netloc:  # does not look like a URI: kept as is
        return uri
    scheme = parsed.scheme.lower()
    if not scheme or scheme.startswith("x-"):
        return uri
    if scheme in ("airflow", "statewright"):
        raise AssetDefinitionError(
            f"Asset URI {uri!r}: the scheme {scheme!r} is reserved; use another scheme "
            "(for example 'x-mine://...').")
    netloc = parsed.netloc.rpartition("@")[2] if parsed.password else parsed.netloc
    query = (urllib.parse.urlencode(sorted(urllib.parse.parse_qsl(parsed.query)))
             if parsed.query else "")
    cleaned = parsed._replace(scheme=scheme, netloc=netloc, path=parsed.path.rstrip("/") or "/",
                              query=query, fragment="")
    return urllib.parse.urlunsplit(cleaned)


# --- conditions -----------------------------------------------------------------------------


def validate_condition(condition: Any, where: str = "asset condition") -> dict[str, Any]:
    """Check a stored condition's shape; returns it. AssetDefinitionError names the bad part."""
    if not isinstance(condition, Mapping) or len(condition) != 1:
        raise AssetDefinitionError(f"{where}: {condition!r} is not an asset condition.")
    (kind, value), = condition.items()
    if kind == "asset":
        if not isinstance(value, Mapping) or not isinstance(value.get("name"), str):
            raise AssetDefinitionError(f"{where}: asset {value!r} has no name.")
    elif kind == "alias":
        validate_identifier(value, f"{where}: asset alias name")
    elif kind in ("all", "any"):
        if not isinstance(value, list) or not value:
            raise AssetDefinitionError(f"{where}: {kind!r} needs a non-empty list.")
        for item in value:
            validate_condition(item, where)
    else:
        raise AssetDefinitionError(f"{where}: unknown condition kind {kind!r}.")
    return dict(condition)


def _leaves(condition: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    (kind, value), = condition.items()
    if kind == "asset":
        yield "asset", value["name"]
    elif kind == "alias":
        yield "alias", value
    else:
        for item in value:
            yield from _leaves(item)


def asset_names(condition: Mapping[str, Any]) -> list[str]:
    """The names of the assets a condition refers to, in order, once each."""
    return list(dict.fromkeys(v for k, v in _leaves(condition) if k == "asset"))


def alias_names(condition: Mapping[str, Any]) -> list[str]:
    return list(dict.fromkeys(v for k, v in _leaves(condition) if k == "alias"))


def evaluate(condition: Mapping[str, Any], ready: Collection[str],
             aliases: Mapping[str, Collection[str]] | None = None) -> bool:
    """Whether the condition holds when the assets named in ``ready`` have new events.

    ``aliases`` maps an alias name to the names of the assets it resolved to.
    """
    (kind, value), = condition.items()
    if kind == "asset":
        return value["name"] in ready
    if kind == "alias":
        return any(name in ready for name in (aliases or {}).get(value, ()))
    results = (evaluate(item, ready, aliases) for item in value)
    return all(results) if kind == "all" else any(results)


def pending(condition: Mapping[str, Any], ready: Collection[str],
            aliases: Mapping[str, Collection[str]] | None = None) -> dict[str, Any]:
    """The condition as a tree where every node says whether it holds (``"ready"``)."""
    (kind, value), = condition.items()
    if kind in ("asset", "alias"):
        return {kind: value, "ready": evaluate(condition, ready, aliases)}
    items = [pending(item, ready, aliases) for item in value]
    done = [i["ready"] for i in items]
    return {kind: items, "ready": all(done) if kind == "all" else any(done)}


def describe_condition(condition: Mapping[str, Any]) -> str:
    """A one-line form for people: ``a & (b | c)``."""
    (kind, value), = condition.items()
    if kind == "asset":
        return str(value["name"])
    if kind == "alias":
        return f"alias:{value}"
    parts = [describe_condition(item) for item in value]
    joined = (" & " if kind == "all" else " | ").join(
        f"({p})" if (" & " in p or " | " in p) else p for p in parts)
    return joined


class AssetTriggeredTimetable(NullTimetable):
    """A DAG scheduled on assets only: no time-based runs (Airflow's class of that name)."""

    type_name = "asset_triggered"
    periodic = False
    summary = "Asset"
