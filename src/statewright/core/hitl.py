"""Human in the loop: the rules a response must satisfy, and who may give it. Pure: no I/O.

A request (``HITLOperator``) offers ``options`` (one, or several with ``multiple``), may carry
a form of ``params`` (serialized as DAG params are: ``{name: {"value", "schema", ...}}``), may
name the ``respondents`` (user names or roles) and may give ``defaults`` taken when its
response timeout passes.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from statewright.core.params import ParamProblem, param_problem

__all__ = [
    "ResponseProblem",
    "may_respond",
    "respondent_names",
    "response_problems",
    "timeout_event",
]


@dataclass(frozen=True)
class ResponseProblem:
    """One field of a response that cannot be accepted (``chosen_options`` or a param name)."""

    field: str
    message: str


def response_problems(
    *,
    options: Sequence[str],
    multiple: bool,
    params: Mapping[str, Mapping[str, Any]] | None,
    chosen_options: Sequence[str],
    params_input: Mapping[str, Any] | None,
) -> list[ResponseProblem]:
    """Why a response cannot be accepted (empty: it can)."""
    problems: list[ResponseProblem] = []
    chosen = list(chosen_options)
    if not chosen:
        problems.append(ResponseProblem("chosen_options", "choose at least one option"))
    elif not multiple and len(chosen) > 1:
        problems.append(ResponseProblem(
            "chosen_options", f"only one option may be chosen, got {len(chosen)}"))
    unknown = [c for c in chosen if c not in options]
    if unknown:
        problems.append(ResponseProblem(
            "chosen_options", f"{unknown} are not among the options {list(options)}"))
    problems += [ResponseProblem(p.param, p.message)
                 for p in params_problems(params or {}, params_input or {})]
    return problems


def params_problems(spec: Mapping[str, Mapping[str, Any]],
                    values: Mapping[str, Any]) -> list[ParamProblem]:
    """Each form field checked against its schema; a missing field takes its default."""
    problems = [ParamProblem(k, "is not a field of this form") for k in values if k not in spec]
    for name, param in spec.items():
        if name in values:
            value = values[name]
        elif param.get("has_default", True):
            value = param.get("value")
        else:
            problems.append(ParamProblem(name, "a value is required"))
            continue
        why = param_problem(value, param.get("schema") or {})
        if why is not None:
            problems.append(ParamProblem(name, why))
    return problems


def filled_params(spec: Mapping[str, Mapping[str, Any]],
                  values: Mapping[str, Any]) -> dict[str, Any]:
    """The form's values: those given, else each field's default."""
    return {name: values[name] if name in values else param.get("value")
            for name, param in spec.items()}


def respondent_names(respondents: Any) -> list[str] | None:
    """Airflow's ``assigned_users`` (``[{"id", "name"}]``) or plain names/roles, as names.
    None: anyone who may edit task instances may respond."""
    if not respondents:
        return None
    items = [respondents] if isinstance(respondents, (str, Mapping)) else list(respondents)
    names: list[str] = []
    for item in items:
        if isinstance(item, Mapping):
            names += [str(item[k]) for k in ("id", "name") if item.get(k) is not None]
        else:
            names.append(str(item))
    return names


def may_respond(respondents: Collection[str] | None, user: str, roles: Collection[str]) -> bool:
    """Whether ``user`` (with ``roles``) is among the ``respondents`` (None: everyone is)."""
    if respondents is None:
        return True
    allowed = set(respondents)
    return user in allowed or bool(allowed & set(roles))


def timeout_event(defaults: Sequence[str] | None) -> dict[str, Any]:
    """What a task resumes with when its response timeout passes: the defaults, else an error
    (the operator's continuation fails the try with ``HITLTimeoutError``, as Airflow's)."""
    if defaults:
        return {"chosen_options": list(defaults), "params_input": {}, "timedout": True,
                "responded_by_user": None}
    return {"error": "The timeout has passed, and the response has not yet been received.",
            "error_type": "timeout"}
