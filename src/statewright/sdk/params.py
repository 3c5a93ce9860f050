"""``Param`` and ``ParamsDict``: DAG and task params with a JSON Schema, as Airflow's.

``Param(default, type=..., enum=..., minimum=..., description=..., title=...)``: every keyword
but ``description`` (and ``schema``, a whole schema) is a JSON Schema keyword. A plain value in
``params`` is a param with an empty schema. ``ParamsDict`` holds the params; reading an item
gives its value, ``get_param`` the ``Param``; setting an item validates the new value.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any, ClassVar

from statewright.core.errors import DagDefinitionError
from statewright.core.params import (
    NO_DEFAULT_MESSAGE,
    ParamProblem,
    ParamValidationError,
    check_schema,
    param_problem,
)

__all__ = ["NOTSET", "Param", "ParamValidationError", "ParamsDict", "conf_overrides_params"]

CONF_OVERRIDES_ENV = "STATEWRIGHT_DAG_RUN_CONF_OVERRIDES_PARAMS"


class _NotSet:
    _instance: ClassVar[_NotSet | None] = None

    def __new__(cls) -> _NotSet:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NOTSET"

    def __bool__(self) -> bool:
        return False


NOTSET: Any = _NotSet()


def conf_overrides_params() -> bool:
    """Airflow's ``[core] dag_run_conf_overrides_params`` (on unless set to false)."""
    raw = os.environ.get(CONF_OVERRIDES_ENV, "").strip().lower()
    if raw in ("", "1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise DagDefinitionError(f"{CONF_OVERRIDES_ENV}={raw!r} is not a boolean; use true or false.")


class Param:
    """A param's default value and the JSON Schema its value must satisfy."""

    def __init__(self, default: Any = NOTSET, description: str | None = None,
                 **kwargs: Any) -> None:
        self.value = default
        self.description = description
        schema = kwargs.pop("schema", None)
        self.schema: dict[str, Any] = dict(schema if schema is not None else kwargs)
        if schema is not None and kwargs:
            self.schema.update(kwargs)

    def __repr__(self) -> str:
        return f"Param({self.value!r}, schema={self.schema!r})"

    @property
    def has_value(self) -> bool:
        return self.value is not NOTSET

    def problem(self, value: Any = NOTSET) -> str | None:
        """Why ``value`` (default: this param's own value) is not valid for this param."""
        value = self.value if value is NOTSET else value
        if value is NOTSET:
            return NO_DEFAULT_MESSAGE
        return param_problem(value, self.schema)

    def resolve(self, value: Any = NOTSET, suppress_exception: bool = False,
                *, name: str = "value") -> Any:
        """The value (``value`` or the default) after validation against the schema."""
        final = self.value if value is NOTSET else value
        problem = self.problem(final)
        if problem is not None:
            if suppress_exception:
                return None
            raise ParamValidationError("params", [ParamProblem(name, problem)])
        return final

    def dump(self) -> dict[str, Any]:
        """Airflow's ``Param.dump``: value, schema and description."""
        return {"value": None if self.value is NOTSET else self.value,
                "schema": self.schema, "description": self.description}

    def serialize(self) -> dict[str, Any]:
        """The plain-JSON description the scheduler, API and UI read (``core.params``)."""
        return {**self.dump(), "has_default": self.has_value}


class ParamsDict(MutableMapping[str, Any]):
    """Params by name: ``params[name]`` is the value, ``get_param(name)`` the ``Param``."""

    def __init__(self, dict_obj: Mapping[str, Any] | None = None,
                 suppress_exception: bool = False) -> None:
        self.suppress_exception = suppress_exception
        self.__dict: dict[str, Param] = {}
        source = dict_obj.to_params() if isinstance(dict_obj, ParamsDict) else (dict_obj or {})
        for key, value in source.items():
            self.__dict[str(key)] = copy.copy(value) if isinstance(value, Param) else Param(value)

    def to_params(self) -> dict[str, Param]:
        return dict(self.__dict)

    def __getitem__(self, key: str) -> Any:
        return self.__dict[key].value

    def __setitem__(self, key: str, value: Any) -> None:
        if isinstance(value, Param):
            self.__dict[key] = value
        elif key in self.__dict:
            param = self.__dict[key]
            param.value = param.resolve(value, self.suppress_exception, name=key)
        else:
            self.__dict[key] = Param(value)

    def __delitem__(self, key: str) -> None:
        del self.__dict[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.__dict)

    def __len__(self) -> int:
        return len(self.__dict)

    def __repr__(self) -> str:
        return f"ParamsDict({self.__dict!r})"

    def __copy__(self) -> ParamsDict:
        return ParamsDict(self, self.suppress_exception)

    def copy(self) -> ParamsDict:
        return self.__copy__()

    def get_param(self, key: str) -> Param:
        return self.__dict[key]

    def update(self, *args: Any, **kwargs: Any) -> None:
        other = args[0] if args else {}
        if isinstance(other, ParamsDict):
            self.__dict.update(other.to_params())
            other = {}
        super().update(other, **kwargs)

    def dump(self) -> dict[str, Any]:
        """Every param's value (``None`` for a param with no default)."""
        return {k: (None if p.value is NOTSET else p.value) for k, p in self.__dict.items()}

    def serialize(self) -> dict[str, dict[str, Any]]:
        return {k: p.serialize() for k, p in self.__dict.items()}

    def validate(self) -> dict[str, Any]:
        """Every param's value, validated; raises ParamValidationError naming each bad one."""
        problems = [ParamProblem(k, msg) for k, p in self.__dict.items()
                    if (msg := p.problem()) is not None]
        if problems and not self.suppress_exception:
            raise ParamValidationError("params", problems)
        return self.dump()

    def deep_merge(self, data: Mapping[str, Any] | None) -> ParamsDict:
        """A copy with ``data``'s values set on top (validated as they are set)."""
        merged = ParamsDict(self, self.suppress_exception)
        for key, value in (data or {}).items():
            merged[key] = value
        return merged


def check_params(params: ParamsDict, where: str) -> None:
    """At parse time: every schema is a JSON Schema and every default satisfies its schema."""
    for name, param in params.to_params().items():
        schema_problem = check_schema(param.schema)
        if schema_problem is not None:
            raise DagDefinitionError(
                f"{where}: param {name!r} has an invalid JSON Schema: {schema_problem}.")
        if not param.has_value:
            continue
        try:
            json.dumps(param.value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise DagDefinitionError(
                f"{where}: params must be plain JSON data; param {name!r} has the default "
                f"{param.value!r}: {exc}."
            ) from None
        problem = param.problem()
        if problem is not None:
            raise DagDefinitionError(
                f"{where}: the default of param {name!r} ({param.value!r}) does not satisfy its "
                f"schema: {problem}.")
