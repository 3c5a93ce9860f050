from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from statewright.sdk.triggers import DateTimeTrigger, TimeDeltaTrigger, TriggerEvent, temporal

START = datetime(2026, 1, 1, tzinfo=UTC)


async def _first_event(trigger, timeout: float = 5.0) -> TriggerEvent:
    events = trigger.run()
    try:
        return await asyncio.wait_for(anext(events), timeout)
    finally:
        await events.aclose()


class FakeTime:
    """A clock that moves forward only when the trigger sleeps."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.sleeps: list[float] = []

    def clock(self) -> datetime:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def fake_time(monkeypatch):
    fake = FakeTime(START)
    monkeypatch.setattr(temporal, "_now", fake.clock)
    monkeypatch.setattr(temporal, "_sleep", fake.sleep)
    return fake


def test_moment_must_be_timezone_aware():
    with pytest.raises(ValueError, match="has no timezone"):
        DateTimeTrigger(datetime(2026, 1, 1))
    with pytest.raises(TypeError, match="must be a datetime"):
        DateTimeTrigger("2026-01-01")  # type: ignore[arg-type]


def test_moment_in_the_past_fires_immediately(fake_time):
    moment = START - timedelta(days=1)
    event = asyncio.run(_first_event(DateTimeTrigger(moment)))
    assert event == TriggerEvent(moment.isoformat())
    assert fake_time.sleeps == []


def test_long_wait_sleeps_in_bounded_chunks_and_rechecks_the_clock(fake_time):
    moment = START + timedelta(hours=2, minutes=30)
    event = asyncio.run(_first_event(DateTimeTrigger(moment)))
    assert event.payload == "2026-01-01T02:30:00+00:00"
    assert fake_time.sleeps == [3600.0, 3600.0, 1800.0]
    assert fake_time.now == moment


def test_a_clock_jump_is_noticed(fake_time, monkeypatch):
    original_sleep = fake_time.sleep

    async def sleep_then_jump(seconds: float) -> None:
        await original_sleep(seconds)
        fake_time.now += timedelta(hours=5)  # e.g. the machine was suspended

    monkeypatch.setattr(temporal, "_sleep", sleep_then_jump)
    asyncio.run(_first_event(DateTimeTrigger(START + timedelta(hours=3))))
    assert fake_time.sleeps == [3600.0]


def test_time_delta_is_measured_from_construction(fake_time):
    trigger = TimeDeltaTrigger(timedelta(minutes=10))
    assert trigger.moment == START + timedelta(minutes=10)
    fake_time.now += timedelta(minutes=4)
    event = asyncio.run(_first_event(trigger))
    assert event.payload == (START + timedelta(minutes=10)).isoformat()
    assert fake_time.sleeps == [360.0]


def test_time_delta_must_be_a_timedelta():
    with pytest.raises(TypeError, match="must be a timedelta"):
        TimeDeltaTrigger(5)  # type: ignore[arg-type]


def test_moment_a_little_ahead_fires_on_the_real_clock(monkeypatch):
    sleeps: list[float] = []

    async def recorded(seconds: float) -> None:
        sleeps.append(seconds)
        await asyncio.sleep(seconds)

    monkeypatch.setattr(temporal, "_sleep", recorded)
    moment = datetime.now(UTC) + timedelta(milliseconds=50)
    event = asyncio.run(_first_event(DateTimeTrigger(moment), timeout=60.0))
    assert datetime.now(UTC) >= moment
    assert event.payload == moment.isoformat()
    # It slept until the moment and no longer: no wait it asked for went past the 50 ms.
    assert all(0 < s <= 0.05 for s in sleeps), sleeps
