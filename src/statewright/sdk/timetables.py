"""Airflow's timetable classes by their Airflow names (``airflow.timetables.*``).

The timetables themselves are pure rules in ``statewright.core.timetables``;
``AssetOrTimeSchedule`` lives with the assets, the partitioned timetables with the partitions.
"""

from __future__ import annotations

from statewright.core.timetables import (
    CronDataIntervalTimetable,
    CronTriggerTimetable,
    DagRunInfo,
    DataInterval,
    DeltaDataIntervalTimetable,
    DeltaTriggerTimetable,
    EventsTimetable,
    MultipleCronTriggerTimetable,
    NullTimetable,
    OnceTimetable,
    TimeRestriction,
    Timetable,
)
from statewright.sdk.assets import AssetOrTimeSchedule

__all__ = [
    "AssetOrTimeSchedule",
    "CronDataIntervalTimetable",
    "CronTriggerTimetable",
    "DagRunInfo",
    "DataInterval",
    "DeltaDataIntervalTimetable",
    "DeltaTriggerTimetable",
    "EventsTimetable",
    "MultipleCronTriggerTimetable",
    "NullTimetable",
    "OnceTimetable",
    "TimeRestriction",
    "Timetable",
]
