"""Trigger kwargs are stored serialized once now (``crypto.encrypt_serialized``); rows stored
before, serialized twice (``encrypt_json``), still run to their event."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from cryptography.fernet import MultiFernet
from sqlalchemy import Engine, select, update
from triggerer_helpers import defer, make_run, ti_row

from statewright.crypto import decrypt_json, encrypt_json
from statewright.db.engine import transaction
from statewright.db.tables import task_instance, trigger
from statewright.sdk.triggers import TimeDeltaTrigger
from statewright.services.triggerer import TriggererConfig, TriggererJob


@pytest.fixture
def triggerer(engine: Engine, cipher: MultiFernet) -> Iterator[TriggererJob]:
    job_ = TriggererJob(engine, cipher=cipher, config=TriggererConfig(
        heartbeat_seconds=0.2, health_threshold_seconds=2.0, cleanup_every_seconds=0.0))
    yield job_
    job_.stop()


def test_rows_stored_once_and_twice_both_fire(engine: Engine, cipher: MultiFernet,
                                              triggerer: TriggererJob) -> None:
    ids = list(make_run(engine, 2).values())
    defer(engine, ids, lambda: TimeDeltaTrigger(timedelta(milliseconds=50)))
    with transaction(engine) as conn:
        rows = conn.execute(select(trigger.c.id, trigger.c.kwargs).order_by(trigger.c.id)).all()
        plaintexts = [cipher.decrypt(r.kwargs.encode()) for r in rows]
        assert all(p.startswith(b'{"__type":"serialized","value":{') for p in plaintexts)
        # the second row as a worker before this change stored it
        data = decrypt_json(cipher, rows[1].kwargs)
        conn.execute(update(trigger).where(trigger.c.id == rows[1].id)
                     .values(kwargs=encrypt_json(cipher, data)))
        assert b'"__type":"dict"' in cipher.decrypt(
            conn.execute(select(trigger.c.kwargs).where(trigger.c.id == rows[1].id))
            .scalar_one().encode())
    triggerer.start()
    deadline = time.monotonic() + 10
    while not all(ti_row(engine, pk).state == "scheduled" for pk in ids):
        assert time.monotonic() < deadline, "timed out waiting"
        triggerer.run_once()
        time.sleep(0.02)
    with engine.connect() as conn:
        resumed = conn.execute(select(task_instance.c.next_kwargs)
                               .where(task_instance.c.id.in_(ids))).scalars().all()
    assert all("event" in kw for kw in resumed)
