"""Partitioned assets, as pure rules: mappers, windows, wait policies, partitioned timetables,
and the decision of which partitioned runs a consumer gets (``plan_runs``)."""

from __future__ import annotations

from statewright.core.partitions.mappers import (
    AllowedKeyMapper,
    FanOutMapper,
    FixedKeyMapper,
    IdentityMapper,
    PartitionKeyError,
    PartitionMapper,
    ProductMapper,
    RollupMapper,
    StartOfDayMapper,
    StartOfHourMapper,
    StartOfMonthMapper,
    StartOfWeekMapper,
    StartOfYearMapper,
    mapper_from_dict,
)
from statewright.core.partitions.plan import (
    PartitionConfig,
    PartitionEvent,
    PartitionPlan,
    PartitionRun,
    plan_runs,
)
from statewright.core.partitions.timetables import (
    CronPartitionTimetable,
    PartitionedAtRuntime,
    check_partition_key,
)
from statewright.core.partitions.windows import (
    DayWindow,
    MinimumCount,
    MonthWindow,
    SegmentWindow,
    WaitForAll,
    WaitPolicy,
    WeekWindow,
    Window,
)

__all__ = [
    "AllowedKeyMapper",
    "CronPartitionTimetable",
    "DayWindow",
    "FanOutMapper",
    "FixedKeyMapper",
    "IdentityMapper",
    "MinimumCount",
    "MonthWindow",
    "PartitionConfig",
    "PartitionEvent",
    "PartitionKeyError",
    "PartitionMapper",
    "PartitionPlan",
    "PartitionRun",
    "PartitionedAtRuntime",
    "ProductMapper",
    "RollupMapper",
    "SegmentWindow",
    "StartOfDayMapper",
    "StartOfHourMapper",
    "StartOfMonthMapper",
    "StartOfWeekMapper",
    "StartOfYearMapper",
    "WaitForAll",
    "WaitPolicy",
    "WeekWindow",
    "Window",
    "check_partition_key",
    "mapper_from_dict",
    "plan_runs",
]
