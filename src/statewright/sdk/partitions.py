"""Partitioned assets by their Airflow names: ``PartitionedAssetTimetable``, the partition
mappers, windows and wait policies, ``CronPartitionTimetable`` and ``PartitionedAtRuntime``.

The rules are pure, in ``statewright.core.partitions``; see docs/assets.md (Partitions).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from statewright.core.asset_conditions import AssetDefinitionError
from statewright.core.partitions import (
    AllowedKeyMapper,
    CronPartitionTimetable,
    DayWindow,
    FanOutMapper,
    FixedKeyMapper,
    IdentityMapper,
    MinimumCount,
    MonthWindow,
    PartitionConfig,
    PartitionedAtRuntime,
    PartitionKeyError,
    PartitionMapper,
    ProductMapper,
    RollupMapper,
    SegmentWindow,
    StartOfDayMapper,
    StartOfHourMapper,
    StartOfMonthMapper,
    StartOfWeekMapper,
    StartOfYearMapper,
    WaitForAll,
    WeekWindow,
    Window,
)
from statewright.sdk.assets import AssetOrTimeSchedule, BaseAsset

__all__ = [
    "AllowedKeyMapper",
    "CronPartitionTimetable",
    "DayWindow",
    "FanOutMapper",
    "FixedKeyMapper",
    "IdentityMapper",
    "MinimumCount",
    "MonthWindow",
    "PartitionKeyError",
    "PartitionMapper",
    "PartitionedAssetTimetable",
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
    "WeekWindow",
    "Window",
]


class PartitionedAssetTimetable(AssetOrTimeSchedule):
    """Runs once per downstream partition key when the assets' events for it are there.

    Each upstream event's partition key is mapped by the asset's mapper
    (``partition_mapper_config[asset]``, else ``default_partition_mapper``, else
    ``IdentityMapper()``); the DAG's condition over ``assets`` must hold for one key.
    """

    def __init__(self, *, assets: Iterable[BaseAsset] | BaseAsset,
                 default_partition_mapper: PartitionMapper | None = None,
                 partition_mapper_config: Mapping[Any, PartitionMapper] | None = None) -> None:
        super().__init__(timetable=PartitionedAtRuntime(), assets=assets)
        per_asset: dict[str, PartitionMapper] = {}
        for asset, mapper in (partition_mapper_config or {}).items():
            name = getattr(asset, "name", None)
            if not isinstance(name, str) or not isinstance(mapper, PartitionMapper):
                raise AssetDefinitionError(
                    f"partition_mapper_config: map an Asset to a PartitionMapper, got "
                    f"{asset!r}: {mapper!r}")
            per_asset[name] = mapper
        default = default_partition_mapper or IdentityMapper()
        if not isinstance(default, PartitionMapper):
            raise AssetDefinitionError(
                f"default_partition_mapper must be a PartitionMapper, got {default!r}")
        self.partition_config = PartitionConfig(default, per_asset)
