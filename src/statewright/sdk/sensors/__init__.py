"""Sensors: tasks that wait for a condition.

Exports ``BaseSensor`` and ``PokeReturnValue``, and the built-ins ``BashSensor``,
``DateTimeSensor``, ``TimeDeltaSensor``, ``TimeSensor`` (and ``TimeSensorAsync``),
``DayOfWeekSensor``, ``FileSensor``, ``HttpSensor``, ``PythonSensor`` and
``ExternalTaskSensor`` (with its ``ExternalTaskTrigger``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from statewright.sdk.sensors.base import BaseSensor, PokeReturnValue
from statewright.sdk.sensors.bash import BashSensor
from statewright.sdk.sensors.external_task import ExternalTaskSensor, ExternalTaskTrigger
from statewright.sdk.sensors.filesystem import FileSensor
from statewright.sdk.sensors.python import PythonSensor
from statewright.sdk.sensors.time import (
    DateTimeSensor,
    TimeDeltaSensor,
    TimeSensor,
    TimeSensorAsync,
)
from statewright.sdk.sensors.weekday import DayOfWeekSensor

if TYPE_CHECKING:
    from statewright.sdk.sensors.http import HttpSensor

BaseSensorOperator = BaseSensor

__all__ = [
    "BaseSensor",
    "BaseSensorOperator",
    "BashSensor",
    "DateTimeSensor",
    "DayOfWeekSensor",
    "ExternalTaskSensor",
    "ExternalTaskTrigger",
    "FileSensor",
    "HttpSensor",
    "PokeReturnValue",
    "PythonSensor",
    "TimeDeltaSensor",
    "TimeSensor",
    "TimeSensorAsync",
]


def __getattr__(name: str) -> Any:
    """``HttpSensor`` is loaded on first use (httpx: see ``statewright.sdk.hooks``)."""
    if name == "HttpSensor":
        from statewright.sdk.sensors.http import HttpSensor

        return HttpSensor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
