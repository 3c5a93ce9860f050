"""``Variable`` (Airflow's ``Variable.get`` / ``Variable.set``) and the template accessors.

``Variable.get(key, default=..., deserialize_json=...)`` reads through the lookup order of
:mod:`statewright.sdk.secrets`; a missing key without a default raises ``KeyError`` naming it,
and a value that is not JSON when ``deserialize_json=True`` raises ``ValueError`` naming the key.
``Variable.set(key, value, description=None, serialize_json=False)`` writes to the metadata
store (from a task: through its worker).

:func:`template_accessors` gives the template context's ``var`` and ``conn``: ``{{ var.value.KEY
}}``, ``{{ var.json.KEY.field }}``, ``{{ conn.ID.host }}``. They read nothing until a template
uses them.
"""

from __future__ import annotations

import json
from typing import Any

from statewright.sdk import secrets
from statewright.sdk.connection import Connection

__all__ = ["Variable", "template_accessors"]

_NO_DEFAULT = object()


class Variable:
    """A key and a value (text, or JSON with ``deserialize_json``)."""

    def __init__(self, key: str, val: str | None = None, description: str | None = None) -> None:
        self.key = key
        self.val = val
        self.description = description

    def __repr__(self) -> str:
        return f"Variable(key={self.key!r})"

    @staticmethod
    def get(key: str, default: Any = _NO_DEFAULT, deserialize_json: bool = False,
            *, default_var: Any = _NO_DEFAULT) -> Any:
        if default is _NO_DEFAULT:
            default = default_var  # Airflow 2's name for the default
        value = secrets.get_variable(key)
        if value is None:
            if default is _NO_DEFAULT:
                raise KeyError(f"Variable {key} does not exist")
            return default
        if not deserialize_json:
            return value
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"Variable {key!r} is not valid JSON ({exc}); read it without "
                             "deserialize_json, or store JSON in it") from None

    @staticmethod
    def set(key: str, value: Any, description: str | None = None,
            serialize_json: bool = False) -> None:
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"a variable key must be a non-empty string, got {key!r}")
        if serialize_json:
            text = json.dumps(value, indent=2)
        elif isinstance(value, str):
            text = value
        else:
            text = str(value)
        secrets.set_variable(key, text, description)


class _VarValues:
    """``var.value``: each attribute or item is a variable's text."""

    def __init__(self, as_json: bool) -> None:
        self._as_json = as_json

    def __getattr__(self, key: str) -> Any:
        if key.startswith("__"):
            raise AttributeError(key)
        return Variable.get(key, deserialize_json=self._as_json)

    def __getitem__(self, key: str) -> Any:
        return Variable.get(key, deserialize_json=self._as_json)

    def get(self, key: str, default: Any = None) -> Any:
        return Variable.get(key, default, deserialize_json=self._as_json)

    def __repr__(self) -> str:
        return f"<variables ({'json' if self._as_json else 'value'})>"


class _VarAccessor:
    def __init__(self) -> None:
        self.value = _VarValues(as_json=False)
        self.json = _VarValues(as_json=True)

    def __repr__(self) -> str:
        return "<variables>"


class _ConnAccessor:
    """``conn``: each attribute or item is a connection (read when first used)."""

    def __getattr__(self, conn_id: str) -> Connection:
        if conn_id.startswith("__"):
            raise AttributeError(conn_id)
        return secrets.get_connection(conn_id)

    def __getitem__(self, conn_id: str) -> Connection:
        return secrets.get_connection(conn_id)

    def get(self, conn_id: str, default: Any = None) -> Any:
        try:
            return secrets.get_connection(conn_id)
        except secrets.ConnectionNotFound:
            return default

    def __repr__(self) -> str:
        return "<connections>"


def template_accessors() -> dict[str, Any]:
    """``{"var": ..., "conn": ...}`` for a template context; lazy: nothing is read until a
    template asks for a key."""
    return {"var": _VarAccessor(), "conn": _ConnAccessor()}
