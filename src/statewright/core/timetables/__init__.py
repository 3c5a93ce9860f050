"""Timetables: when a DAG's scheduled runs happen, and which data interval each one covers.

Pure rules over datetimes (no I/O). The semantics follow Apache Airflow 3's defaults:

* ``schedule=None`` never schedules (manual runs only); ``"@once"`` schedules one run.
* A cron string or preset is a *trigger* timetable (Airflow 3's
  ``[scheduler] create_cron_data_intervals = False``): a run fires at each cron time, and its
  logical date, data interval and ``run_after`` are that time.
* A ``timedelta`` is a trigger timetable that fires every ``delta`` from ``start_date``.
* ``data_intervals=True`` (or a ``Cron/DeltaDataIntervalTimetable``) gives Airflow 2's
  interval semantics: a run covers ``[t_i, t_{i+1})`` and is created at ``t_{i+1}``.
* A user's ``Timetable`` subclass implements Airflow's ``next_dagrun_info``.

Exports: the API (``Timetable``, ``DataInterval``, ``TimeRestriction``, ``DagRunInfo``), the
timetables, ``parse_schedule``, ``serialize_timetable`` / ``deserialize_timetable``,
``describe_timetable`` and ``run_id_for``. See docs/timetables-and-plugins.md.
"""

from __future__ import annotations

from statewright.core.timetables.base import (
    DagRunInfo,
    DataInterval,
    Restriction,
    TimeRestriction,
    Timetable,
    TimetableError,
    classpath_of,
)
from statewright.core.timetables.describe import describe_cron, describe_timetable
from statewright.core.timetables.events import EventsTimetable, MultipleCronTriggerTimetable
from statewright.core.timetables.parse import (
    RUN_TYPES,
    parse_schedule,
    run_id_for,
    validate_schedule_args,
)
from statewright.core.timetables.periodic import (
    CRON_PRESETS,
    CronDataIntervalTimetable,
    CronTriggerTimetable,
    DeltaDataIntervalTimetable,
    DeltaTriggerTimetable,
)
from statewright.core.timetables.simple import NullTimetable, OnceTimetable
from statewright.core.timetables.stored import (
    PrecomputedTimetable,
    deserialize_timetable,
    serialize_timetable,
)

__all__ = [
    "CRON_PRESETS",
    "RUN_TYPES",
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
    "PrecomputedTimetable",
    "Restriction",
    "TimeRestriction",
    "Timetable",
    "TimetableError",
    "classpath_of",
    "describe_cron",
    "describe_timetable",
    "deserialize_timetable",
    "parse_schedule",
    "run_id_for",
    "serialize_timetable",
    "validate_schedule_args",
]
