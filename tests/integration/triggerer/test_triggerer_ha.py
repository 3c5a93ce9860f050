"""Two real ``statewright triggerer`` processes on PostgreSQL; one is killed with SIGKILL.

Its triggers are reclaimed by the other once its heartbeat is older than the threshold, and
every deferred task instance is resumed exactly once (checked in the state history).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import MultiFernet
from sqlalchemy import Engine, select
from triggerer_helpers import defer, make_run, ti_row

from statewright.crypto import generate_key, load_fernet
from statewright.db.repositories import transitions_log
from statewright.db.tables import job, trigger
from statewright.sdk.triggers import FileTrigger
from statewright.services.worker import deferral

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
STATEWRIGHT = str(Path(sys.executable).parent / "statewright")


@pytest.fixture
def pg(pg_engine: Engine) -> Engine:
    return pg_engine  # emptied before and after (conftest)


@pytest.fixture
def key() -> Iterator[tuple[str, MultiFernet]]:
    raw = generate_key()
    cipher = load_fernet(raw)
    deferral.install_cipher(cipher)
    yield raw, cipher
    deferral.install_cipher(None)


def _start(url: str, raw_key: str, home: Path, name: str) -> subprocess.Popen[bytes]:
    # A triggerer is dead after 5 s without a heartbeat (every 0.3 s): a live one that a loaded
    # machine holds up for a second or two is not mistaken for a dead one.
    env = {**os.environ, "STATEWRIGHT_DATABASE_URL": url, "STATEWRIGHT_FERNET_KEY": raw_key,
           "STATEWRIGHT_HOME": str(home), "STATEWRIGHT_HEARTBEAT_SECONDS": "0.3",
           "STATEWRIGHT_TRIGGERER_HEALTH_THRESHOLD_SECONDS": "5", "COLUMNS": "200"}
    with open(home / f"{name}.log", "wb") as log:  # the child keeps its own copy
        return subprocess.Popen([STATEWRIGHT, "triggerer"], env=env, stdout=log,
                                stderr=subprocess.STDOUT)


def _wait(done: Any, timeout: float, what: str) -> None:
    """Poll ``done`` until it holds; ``timeout`` only ends a wait that would never end."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _owners(engine: Engine) -> dict[int, int | None]:
    with engine.connect() as conn:
        return {r.id: r.triggerer_id for r in conn.execute(select(trigger)).all()}


def _heartbeats_since_start(engine: Engine, not_id: int, seen: set[Any]) -> int:
    """Adds the other triggerer's heartbeats since its start to ``seen``; returns how many."""
    with engine.connect() as conn:
        row = conn.execute(select(job).where(job.c.id != not_id)).first()
    if row is not None and row.latest_heartbeat > row.start_date:
        seen.add(row.latest_heartbeat)
    return len(seen)


def test_a_killed_triggerers_triggers_are_reclaimed_and_fire_once(
        pg: Engine, postgres_url: str, key: tuple[str, MultiFernet], tmp_path: Path) -> None:
    raw_key, _ = key
    ids = list(make_run(pg, 20).values())
    # The triggers fire when the test writes this file, after the take-over: however slowly
    # the processes start, none fires while the first triggerer still holds it.
    ready = tmp_path / "ready"
    defer(pg, ids, lambda: FileTrigger(str(ready), poke_interval=0.5))
    first = _start(postgres_url, raw_key, tmp_path, "first")
    second: subprocess.Popen[bytes] | None = None
    try:
        _wait(lambda: len(set(_owners(pg).values()) - {None}) == 1
              and None not in _owners(pg).values(), 120, "the first triggerer to claim all")
        (first_id,) = set(_owners(pg).values())
        second = _start(postgres_url, raw_key, tmp_path, "second")
        seen: set[Any] = set()
        # Two heartbeats after its start: the second has been through a claiming loop.
        _wait(lambda: _heartbeats_since_start(pg, first_id, seen) >= 2, 120,
              "the second triggerer to register and go round its loop")
        assert set(_owners(pg).values()) == {first_id}  # a live triggerer keeps its triggers
        first.send_signal(signal.SIGKILL)
        first.wait(60)
        _wait(lambda: first_id not in _owners(pg).values(), 120,
              "the second triggerer to reclaim the triggers")
        assert all(ti_row(pg, pk).state == "deferred" for pk in ids)  # none fired yet
        ready.write_text("go")
        _wait(lambda: all(ti_row(pg, pk).state == "scheduled" for pk in ids), 120,
              "every task instance to resume")
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(60)
    second_log = (tmp_path / "second.log").read_text()
    assert f"orphaned triggers from dead triggerer {first_id}" in " ".join(second_log.split())
    with pg.connect() as conn:
        for pk in ids:
            hist = [(h.from_state, h.to_state, h.actor)
                    for h in transitions_log.for_task_instance(conn, pk)]
            assert hist.count(("deferred", "scheduled", "triggerer")) == 1, hist
            assert hist[-1] == ("deferred", "scheduled", "triggerer")
        assert conn.execute(select(trigger)).all() == []
        statuses = {r.id: r.status for r in conn.execute(select(job)).all()}
    assert statuses[first_id] == "running"  # killed: it never said goodbye
    assert sorted(statuses.values()) == ["running", "stopped"]  # the second stopped cleanly
