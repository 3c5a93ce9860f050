"""A flow's parameters as a DAG's params: the trigger form and the run's validation.

As Prefect builds a deployment's parameter schema from the flow function's signature, each
parameter becomes ``{"value": default, "has_default": bool, "schema": {...}, "description":
None}`` (the form of ``statewright.core.params``): its JSON Schema from its type hint (through
pydantic), its default when it has one. The flow's row keeps it; the UI's trigger dialog builds
its form from it and a triggered run's parameters are checked against it before the run exists.
"""

from __future__ import annotations

import inspect
import json
import typing
from typing import Any

from pydantic import TypeAdapter


def parameter_spec(fn: Any) -> dict[str, dict[str, Any]]:
    """The spec of each parameter of ``fn`` a caller can name (not ``*args`` / ``**kwargs``)."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # a hint that does not resolve: that parameter takes any JSON value
        hints = {}
    spec: dict[str, dict[str, Any]] = {}
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        has_default = param.default is not param.empty
        spec[name] = {"value": _json_or_none(param.default) if has_default else None,
                      "has_default": has_default, "schema": _schema(hints.get(name)),
                      "description": None}
    return spec


def _schema(hint: Any) -> dict[str, Any]:
    if hint is None:
        return {}
    try:
        schema = TypeAdapter(hint).json_schema()
    except Exception:  # a type pydantic cannot describe: no constraint
        return {}
    schema.pop("title", None)
    return schema  # a model's ``$defs`` stay in it: its ``$ref`` resolve there


def _json_or_none(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return None
