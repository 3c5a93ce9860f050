"""Schemathesis over every operation of the OpenAPI document with every role (admin, operator,
viewer, and no credentials), on SQLite and PostgreSQL: generated requests answer no 5xx and
nothing the document does not allow; where the role lacks the operation's ``x-permission`` the
answer is 403 (401 without credentials), never a 5xx and never a success. Derandomized, so a
run finds the same cases each time; bounded (the examples per operation below)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import schemathesis
from fuzz_helpers import ROLES, allowed, headers_of, seed
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import response_schema_conformance
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.config import Settings

# Examples per operation: (the role holds its permission, it does not). Generated data that
# meets the document ("positive"); the admin also gets data that breaks it ("negative"). The
# admin's 6 per operation (10 when the document had half as many operations) keep the run's
# length while every operation is still tried with every role.
EXAMPLES: dict[str | None, tuple[int, int]] = {
    "admin": (6, 0), "operator": (4, 1), "viewer": (3, 1), None: (3, 1)}
NEGATIVE_EXAMPLES = 2
CHECKS = [not_a_server_error, response_schema_conformance]


@pytest.mark.parametrize("role", ROLES, ids=lambda r: r or "anonymous")
def test_every_operation_with_every_role_gets_no_5xx_and_403_where_not_permitted(
        engine: Engine, settings: Settings, auth_headers: Callable[..., dict[str, str]],
        role: str | None) -> None:
    seed(engine, settings, auth_headers)
    app = create_app(engine=engine, settings=settings)
    schema = schemathesis.openapi.from_dict(app.openapi())  # not fetched: no read timeout
    schema.app = app
    ops = [result.ok() for result in schema.get_all_operations()]
    # an event stream never ends by itself (test_live_events_api.py covers it over a server)
    ops = [o for o in ops if not o.path.endswith("/events/stream")]
    assert len(ops) > 100
    denied = 0
    for op in ops:
        permission = op.definition.raw["x-permission"]
        permitted = allowed(role, permission)
        denied += not permitted
        fresh = lambda: headers_of(engine, auth_headers, role)  # noqa: E731
        examples = EXAMPLES[role][0 if permitted else 1]
        if examples:
            _exercise(op, fresh, examples, GenerationMode.POSITIVE,
                      None if permitted else (401 if role is None else 403),
                      login=permission == "public")
        if role == "admin" and op.method.upper() != "GET":
            _exercise(op, fresh, NEGATIVE_EXAMPLES, GenerationMode.NEGATIVE, None, login=False)
    assert denied == 0 if role == "admin" else denied > 0


def _exercise(operation: Any, fresh_headers: Callable[[], dict[str, str]], examples: int,
              mode: GenerationMode, expected: int | None, *, login: bool) -> None:
    """``expected``: the one status every case must get; ``login``: a public route, where a
    401 answers wrong credentials."""
    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:
        # a fresh token each time: a generated DELETE /auth/tokens/{id} may revoke one
        headers = fresh_headers()
        response = case.call(headers=headers)
        where = f"{case.method} {case.formatted_path} -> {response.status_code}"
        if expected is not None:
            assert response.status_code == expected, f"{where}: {response.text[:300]}"
        elif mode is GenerationMode.POSITIVE:  # a 403 for another reason is fine (a setting)
            denied = response.status_code == 401 and not login
            assert not denied and "needs the role" not in response.text, \
                f"{where}: {response.text[:300]}"
        case.validate_response(response, checks=CHECKS if mode is GenerationMode.POSITIVE
                               else [not_a_server_error], headers=headers)

    try:
        run()
    except Unsatisfiable:  # an operation with nothing to break: no negative data exists
        assert mode is GenerationMode.NEGATIVE
