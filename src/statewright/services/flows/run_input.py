"""The input a paused flow run waits for (``pause_flow_run(wait_for_input=Model)``): a
resume gives it, checked against the JSON schema the flow stored with the pause."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from statewright.db.repositories import flows as flow_repo
from statewright.services.controls.common import ControlError


class RunInputError(ControlError):
    """The input given with a resume is missing, not wanted, or does not fit the schema."""


NO_INPUT: Any = object()


def input_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """What is wrong with ``value`` for ``schema``, naming the field; None when it fits."""
    from jsonschema import Draft202012Validator  # 4 MiB: loaded by the first resume with input

    errors = sorted(Draft202012Validator(schema).iter_errors(value),
                    key=lambda e: (list(e.absolute_path), e.message))
    if not errors:
        return None
    parts = []
    for e in errors[:5]:
        where = ".".join(str(p) for p in e.absolute_path)
        if e.validator == "required" and isinstance(e.instance, dict):
            missing = [k for k in e.validator_value if k not in e.instance]
            where = ".".join([*map(str, e.absolute_path), *missing[:1]])
            parts.append(f"field {where!r} is required")
        else:
            parts.append(f"field {where or '(the input)'!r}: {e.message}")
    return "; ".join(parts)


def give_input(conn: Connection, run: Any, run_input: Any) -> None:
    """At a resume (in its transaction): check the input the paused flow run waits for and
    store it for the flow's process; refuse an input no pause waits for."""
    row = flow_repo.get_flow_run(conn, run.id)
    wanted = row.wanted_input if row is not None else None
    if wanted is None:
        if run_input is not NO_INPUT:
            raise RunInputError(f"Run {run.run_id} of {run.dag_id} waits for no input; resume "
                                "it without one. Nothing was changed.")
        return
    schema = wanted.get("schema")
    if schema is None:
        flow_repo.give_input(conn, run.id, wanted["key"], None)
        return
    if run_input is NO_INPUT:
        fields = sorted(schema.get("properties") or {})
        raise RunInputError(
            f"Run {run.run_id} of {run.dag_id} waits for input ({schema.get('title', 'input')}"
            f"{': ' + ', '.join(fields) if fields else ''}): resume it with one "
            "(--input JSON, or \"input\" in the request body). Nothing was changed.")
    problem = input_problem(run_input, schema)
    if problem is not None:
        raise RunInputError(f"The input for run {run.run_id} does not fit what the flow waits "
                            f"for: {problem}. Nothing was changed.")
    flow_repo.give_input(conn, run.id, wanted["key"], run_input)
