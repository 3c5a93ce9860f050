"""Sensors: tasks that wait for a condition.

Exports ``BaseSensor`` and ``PokeReturnValue``, and the built-ins ``BashSensor``,
``DateTimeSensor``, ``TimeDeltaSensor``, ``TimeSensor`` (and ``TimeSensorAsync``),
``DayOfWeekSensor``, ``FileSensor``, ``HttpSensor``, ``PythonSensor`` and
``ExternalTaskSensor`` (with its ``ExternalTaskTrigger``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from statewright.core.lazy import lazy_exports
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


# httpx: see ``statewright.sdk.hooks``.
__getattr__ = lazy_exports(__name__, {"HttpSensor": "statewright.sdk.sensors.http"})
