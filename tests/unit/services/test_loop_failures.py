"""Service loops back off while their database is out of reach, and say so in one line."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import DBAPIError
from tests.chaos.services import free_port

from statewright.services.loop_failures import LoopFailures, database_unreachable
from statewright.services.scheduler.scheduler import Scheduler

log = logging.getLogger("statewright.test.loop")


def _refused() -> DBAPIError:
    """A real error from a PostgreSQL driver whose server is not there."""
    dead = create_engine(f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/x",
                         poolclass=None)
    try:
        with dead.connect() as conn:
            conn.execute(text("SELECT 1"))
    except DBAPIError as exc:
        return exc
    finally:
        dead.dispose()
    raise AssertionError("a closed port took a connection")


def test_the_wait_doubles_to_the_cap_and_starts_over_after_a_pass(
        caplog: pytest.LogCaptureFixture) -> None:
    exc = _refused()
    assert database_unreachable(exc)
    failures = LoopFailures("test loop", log, period=0.5, cap=5.0)
    with caplog.at_level(logging.INFO, logger=log.name):
        waits = [failures.failed(exc) for _ in range(6)]
        failures.succeeded()
        after = failures.failed(exc)
    assert waits == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert after == 0.5
    records = caplog.records
    # The first failure of a streak keeps its traceback; the rest are one line each.
    assert records[0].exc_info is not None
    assert all(r.exc_info is None and "the database is unreachable" in r.getMessage()
               for r in records[1:6])
    assert "trying again in 5.0s (6 failed passes in a row)" in records[5].getMessage()
    assert "working again after 6 failed passes" in records[6].getMessage()


def test_a_failure_that_is_not_the_database_keeps_its_traceback(
        caplog: pytest.LogCaptureFixture) -> None:
    failures = LoopFailures("test loop", log, period=0.1, cap=1.0)
    with caplog.at_level(logging.INFO, logger=log.name):
        for _ in range(3):
            failures.failed(KeyError("bug"))
    assert not database_unreachable(KeyError("bug"))
    assert [r.exc_info is not None for r in caplog.records] == [True, True, True]
    assert "test loop failed; trying again in 0.4s" in caplog.records[2].getMessage()


class _RecordingStop(threading.Event):
    """A stop event that records how long the loop asked to wait, and ends it after ``n``."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        if len(self.waits) >= self.n:
            self.set()
        return self.is_set()


def test_the_scheduler_backs_off_while_its_database_is_down(
        sqlite_engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    exc = _refused()

    def down(self: Any, **kwargs: Any) -> Any:
        raise exc

    class NoExecutor:
        def slots_available(self) -> int:
            return 0

        def queue_workloads(self, ti_ids: Any) -> None:
            raise AssertionError("nothing is queued while the database is down")

    scheduler = Scheduler(sqlite_engine, NoExecutor())  # type: ignore[arg-type]
    monkeypatch.setattr(Scheduler, "run_once", down)
    stop = _RecordingStop(5)
    scheduler.run_forever(stop)
    idle = scheduler.config.idle_seconds
    assert stop.waits == [min(idle * 2 ** i, 5.0) for i in range(5)]
    assert stop.waits[1] == 2 * idle
