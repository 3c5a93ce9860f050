"""A bounded schemathesis run against the OpenAPI document, signed in as an admin: generated
requests for every operation answer no 5xx and nothing that violates the document."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import schemathesis
from api_helpers import failing_dag, store_dag
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance
from sqlalchemy import Engine

from statewright.api import create_app
from statewright.config import Settings

EXAMPLES = 4  # per operation: a bounded run, not a soak


def test_generated_requests_get_no_5xx_and_answers_match_the_schema(
        engine: Engine, settings: Settings, auth_headers: Callable[..., dict[str, str]],
        failed_run: tuple[str, str]) -> None:
    store_dag(engine, failing_dag("etl"))
    app = create_app(engine=engine, settings=settings)
    headers = auth_headers(engine)
    schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", app, headers=headers)
    operations = [result.ok() for result in schema.get_all_operations()]
    # an event stream never ends by itself (test_live_events_api.py covers it over a server)
    operations = [o for o in operations if not o.path.endswith("/events/stream")]
    assert len(operations) > 20
    for operation in operations:
        _exercise(operation, lambda: auth_headers(engine))


def _exercise(operation: Any, fresh_headers: Callable[[], dict[str, str]]) -> None:
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy())
    def run(case: Any) -> None:
        # a fresh token each time: a generated DELETE /auth/tokens/{id} may revoke one
        case.call_and_validate(headers=fresh_headers(),
                               checks=[not_a_server_error, response_schema_conformance])

    run()
