"""A trigger that fails with a secret it registered (a connection's password) in its error:
the failure the triggerer stores (the task instance's state message, its history, the error
handed back to the task) shows *** instead."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from cryptography.fernet import MultiFernet
from sqlalchemy import Engine, select
from triggerer_helpers import defer, make_run, ti_row

from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import transitions_log
from statewright.db.tables import trigger
from statewright.sdk import masking
from statewright.sdk.triggers import TimeDeltaTrigger
from statewright.services.triggerer.events import Failure, apply_events

PASSWORD = "trigger-side-Secret-77"


@pytest.fixture
def registered() -> Iterator[None]:
    masking.reset_masks()
    masking.mask_secret(PASSWORD)  # as when the trigger read its connection
    yield
    masking.reset_masks()


def test_a_trigger_failure_is_stored_masked(engine: Engine, cipher: MultiFernet,
                                            registered: None) -> None:
    (pk,) = make_run(engine).values()
    defer(engine, [pk], lambda: TimeDeltaTrigger(timedelta(hours=1)))
    with engine.connect() as conn:
        (tid,) = conn.execute(select(trigger.c.id)).scalars().all()
    error = f"HTTP 401 for https://api:{PASSWORD}@example.org"
    with transaction(engine) as conn:
        applied = apply_events(conn, [], [Failure(tid, error, traceback=f"Traceback: {error}")],
                               now=utcnow())
    assert applied.failed == [pk]
    row = ti_row(engine, pk)
    assert row.state_message == "HTTP 401 for https://api:***@example.org"
    assert PASSWORD not in repr(row.next_kwargs)
    assert row.next_kwargs["traceback"] == "Traceback: HTTP 401 for https://api:***@example.org"
    with engine.connect() as conn:
        messages = [h.message for h in transitions_log.for_task_instance(conn, pk)]
    assert all(PASSWORD not in (m or "") for m in messages)
