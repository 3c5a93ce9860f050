"""A manual clock for sensor tests: the sensor base's ``_now`` and ``_sleep`` read and move it,
so a poke loop of hours runs at once and every sleep it asked for is recorded."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from statewright.sdk.sensors import base as sensor_base


class SensorClock:
    def __init__(self, start: datetime) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += timedelta(seconds=seconds)


def install_sensor_clock(monkeypatch: pytest.MonkeyPatch, start: datetime) -> SensorClock:
    clock = SensorClock(start)
    monkeypatch.setattr(sensor_base, "_now", clock)
    monkeypatch.setattr(sensor_base, "_sleep", clock.sleep)
    return clock
