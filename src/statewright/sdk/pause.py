"""``pause_for_input``: Prefect's typed pause, inside a task of a DAG.

``pause_for_input(Model)`` asks a person to fill a form built from a pydantic model. The first
time it is called, the try ends and waits in ``awaiting_input`` (as ``HITLOperator`` does).
When the person responds, the task runs again from its start in the same try, and this time the
call returns the response validated into ``Model``. Work done before the call runs again: put it
after the call, or in an upstream task. Several pauses in one task need distinct ``key``s.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, TypeVar

from statewright.sdk.context import get_current_context
from statewright.sdk.exceptions import TaskAwaitingInput

__all__ = ["model_form", "pause_for_input"]

M = TypeVar("M")
SUBMIT = "Submit"


def model_form(model: type[Any]) -> dict[str, dict[str, Any]]:
    """The params form of a pydantic model: one field per model field, with its schema."""
    schema = model.model_json_schema()
    required = set(schema.get("required") or ())
    form: dict[str, dict[str, Any]] = {}
    for name, prop in (schema.get("properties") or {}).items():
        prop = dict(prop)
        description = prop.pop("description", None)
        prop.pop("title", None)
        has_default = "default" in prop or name not in required
        form[name] = {"value": prop.pop("default", None), "schema": prop,
                      "description": description, "has_default": has_default}
    return form


def pause_for_input(wait_for_input: type[M], *, subject: str | None = None,
                    body: str | None = None, timeout: timedelta | float | None = None,
                    key: str = "input", assigned_users: Any = None) -> M:
    """Wait for a person to fill ``wait_for_input`` (a pydantic model); return it validated.

    Without a response within ``timeout`` the try fails (there is no default to take).
    """
    ti = get_current_context()["ti"]
    responses = dict(getattr(ti, "hitl_responses", None) or {})
    if key in responses:
        event = responses[key] or {}
        if "error" in event:
            from statewright.sdk.operators.hitl import HITLTimeoutError

            raise HITLTimeoutError(event["error"])
        return wait_for_input.model_validate(dict(event.get("params_input") or {}))  # type: ignore[attr-defined, no-any-return]
    request = {"subject": subject or f"Input needed: {wait_for_input.__name__}",
               "body": body, "options": [SUBMIT], "multiple": False, "defaults": None,
               "params": model_form(wait_for_input), "respondents": assigned_users}
    raise TaskAwaitingInput(method_name="__input__", request=request, timeout=timeout,
                            kwargs={"responses": responses, "key": key})
