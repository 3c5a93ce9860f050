"""Airflow's timetable classes by their Airflow names (``airflow.timetables.*``).

The timetables themselves are pure rules in ``statewright.core.schedules``; ``AssetOrTimeSchedule``
lives with the assets.
"""

from __future__ import annotations

from statewright.core.schedules import (
    CronDataIntervalTimetable,
    CronTriggerTimetable,
    DeltaDataIntervalTimetable,
    DeltaTriggerTimetable,
    Timetable,
)
from statewright.sdk.assets import AssetOrTimeSchedule

__all__ = [
    "AssetOrTimeSchedule",
    "CronDataIntervalTimetable",
    "CronTriggerTimetable",
    "DeltaDataIntervalTimetable",
    "DeltaTriggerTimetable",
    "Timetable",
]
