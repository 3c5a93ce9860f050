"""Params: each DAG param's JSON Schema, the merge of defaults with a run's conf, validation.

A DAG's params are serialized as ``{name: {"value": default, "has_default": bool, "schema":
{...}, "description": str | None}}`` (``statewright.sdk.params.Param.serialize``). Validation
uses the ``jsonschema`` library (draft 2020-12, with format checks), as Airflow does. Pure: no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from statewright.core.errors import StatewrightError

if TYPE_CHECKING:
    from jsonschema import FormatChecker

__all__ = [
    "ParamProblem",
    "ParamValidationError",
    "check_schema",
    "merge_params",
    "param_problem",
    "validate_run_conf",
]

NO_DEFAULT_MESSAGE = "no value was passed and the param has no default value"

@functools.cache
def _formats() -> FormatChecker:
    """The format checks of a standard Airflow install, whatever else is installed here: "time"
    is HH:MM:SS (the form of Airflow's trigger form), not RFC 3339's time with an offset, which
    the optional rfc3339-validator package would demand. (jsonschema is imported on the first
    validation: most processes that import this module never validate, and the import costs
    about a tenth of a second of CPU.)"""
    from jsonschema import Draft202012Validator, FormatChecker

    formats = FormatChecker(list(Draft202012Validator.FORMAT_CHECKER.checkers))
    formats.checks("time", raises=ValueError)(_is_time)
    return formats


def _is_time(instance: object) -> bool:
    return not isinstance(instance, str) or bool(datetime.strptime(instance, "%H:%M:%S"))


@dataclass(frozen=True)
class ParamProblem:
    """One param whose value does not satisfy its schema."""

    param: str
    message: str


class ParamValidationError(StatewrightError):
    """Values for params that do not satisfy their schemas; nothing was created or run."""

    def __init__(self, where: str, problems: Sequence[ParamProblem]) -> None:
        self.where = where
        self.problems = list(problems)
        listed = "; ".join(f"param {p.param!r}: {p.message}" for p in self.problems)
        super().__init__(f"{where}: invalid params ({listed}). Nothing was created.")


def check_schema(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` is not a valid JSON Schema, or None."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return exc.message
    return None


def param_problem(value: Any, schema: Mapping[str, Any]) -> str | None:
    """Why ``value`` does not satisfy ``schema`` (one sentence), or None when it does."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    validator = Draft202012Validator(schema, format_checker=_formats())
    error = best_match(validator.iter_errors(value))
    if error is None:
        return None
    path = "".join(f"[{p!r}]" for p in error.absolute_path)
    return f"{path + ': ' if path else ''}{error.message}"


def merge_params(
    spec: Mapping[str, Mapping[str, Any]],
    conf: Mapping[str, Any] | None,
    *,
    conf_overrides_params: bool = True,
) -> tuple[dict[str, Any], list[ParamProblem]]:
    """The params' values for a run (defaults, then conf on top) and the problems found.

    A key of ``conf`` that names no param is kept (Airflow passes it on, with no schema).
    """
    values: dict[str, Any] = {}
    problems: list[ParamProblem] = []
    given = dict(conf or {}) if conf_overrides_params else {}
    for name, entry in spec.items():
        if name in given:
            value = given[name]
        elif entry.get("has_default", True):
            value = entry.get("value")
        else:
            problems.append(ParamProblem(name, NO_DEFAULT_MESSAGE))
            continue
        problem = param_problem(value, entry.get("schema") or {})
        if problem is not None:
            problems.append(ParamProblem(name, problem))
        values[name] = value
    for name, value in given.items():
        values.setdefault(name, value)
    return values, problems


def validate_run_conf(
    spec: Mapping[str, Mapping[str, Any]],
    conf: Mapping[str, Any] | None,
    *,
    where: str,
    conf_overrides_params: bool = True,
) -> dict[str, Any]:
    """The params' values for a new run; raises ParamValidationError naming each bad param."""
    if conf is not None and not isinstance(conf, Mapping):
        raise ParamValidationError(where, [ParamProblem("conf", "conf must be a JSON object")])
    values, problems = merge_params(spec, conf, conf_overrides_params=conf_overrides_params)
    if problems:
        raise ParamValidationError(where, problems)
    return values
