"""``prefect.variables.Variable``: Prefect's variables are statewright's variables (the same
keys). A value is stored as JSON and read back as it was; a variable set as plain text
elsewhere (``statewright variables set``) reads as its text."""

from __future__ import annotations

import json
from typing import Any

from statewright.flows import extras

__all__ = ["Variable"]


class Variable:
    def __init__(self, name: str, value: Any = None) -> None:
        self.name = name
        self.value = value

    @classmethod
    def get(cls, name: str, default: Any = None) -> Any:
        text = extras.call("var_get", name)
        if text is None:
            return default
        try:
            return json.loads(text)
        except ValueError:
            return text

    @classmethod
    def set(cls, name: str, value: Any, tags: list[str] | None = None,
            overwrite: bool = False) -> Variable:
        if not overwrite and extras.call("var_get", name) is not None:
            raise ValueError(f"Variable {name!r} already exists. Use `overwrite=True` to "
                             "update it.")
        text = json.dumps(value)  # Prefect's values are JSON: a string stays a string
        extras.call("var_put", (name, text, None))
        return cls(name, value)

    @classmethod
    def unset(cls, name: str) -> bool:
        return bool(extras.call("var_delete", name))
