"""The pure rules of responses: options, the form's schemas, who may respond, the timeout."""

from __future__ import annotations

from statewright.core.hitl import (
    filled_params,
    may_respond,
    respondent_names,
    response_problems,
    timeout_event,
)

FORM = {"n": {"value": 1, "schema": {"type": "integer", "minimum": 1}, "has_default": True},
        "who": {"value": None, "schema": {"type": "string"}, "has_default": False}}


def _fields(**kw: object) -> list[str]:
    base: dict[str, object] = {"options": ["a", "b"], "multiple": False, "params": FORM,
                               "chosen_options": ["a"], "params_input": {"who": "x"}}
    base.update(kw)
    return [p.field for p in response_problems(**base)]  # type: ignore[arg-type]


def test_a_valid_response_has_no_problem() -> None:
    assert _fields() == []


def test_options_must_be_offered_one_unless_multiple_and_at_least_one() -> None:
    assert _fields(chosen_options=["c"]) == ["chosen_options"]
    assert _fields(chosen_options=["a", "b"]) == ["chosen_options"]
    assert _fields(chosen_options=["a", "b"], multiple=True) == []
    assert _fields(chosen_options=[]) == ["chosen_options"]


def test_each_param_is_checked_and_named() -> None:
    assert _fields(params_input={"who": "x", "n": 0}) == ["n"]
    assert _fields(params_input={}) == ["who"]  # no default: required
    assert _fields(params_input={"who": "x", "extra": 1}) == ["extra"]
    assert filled_params(FORM, {"who": "x"}) == {"n": 1, "who": "x"}


def test_respondents_by_name_or_role() -> None:
    names = respondent_names([{"id": "1", "name": "airflow"}, "operator"])
    assert names == ["1", "airflow", "operator"]
    assert may_respond(names, "airflow", ["viewer"])
    assert may_respond(names, "zoe", ["viewer", "operator"])
    assert not may_respond(names, "zoe", ["viewer"])
    assert respondent_names(None) is None and may_respond(None, "anyone", [])


def test_the_timeout_takes_the_defaults_or_is_an_error() -> None:
    assert timeout_event(["b"])["chosen_options"] == ["b"]
    assert timeout_event(["b"])["timedout"] is True
    assert timeout_event(None)["error_type"] == "timeout"
