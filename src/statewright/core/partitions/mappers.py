"""Partition mappers: how an upstream asset event's partition key becomes a downstream key.

Airflow's names and semantics: ``IdentityMapper`` keeps the key; the temporal mappers
(``StartOfHourMapper`` ... ``StartOfYearMapper``) parse the key with ``input_format`` and
format the start of its hour, day, week (Monday), month or year with ``output_format``;
``ProductMapper`` maps each ``|``-separated segment with its own mapper; ``AllowedKeyMapper``
keeps only the listed keys; ``FixedKeyMapper`` maps every key to one key; ``RollupMapper``
(many upstream keys -> one downstream run, held until its window is complete) and
``FanOutMapper`` (one upstream key -> many downstream runs) combine a mapper with a window.
A key a mapper cannot read raises ``PartitionKeyError`` naming the key and the format.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, ClassVar

from statewright.core.errors import DagDefinitionError
from statewright.core.partitions.windows import (
    DayWindow,
    MonthWindow,
    WaitForAll,
    WaitPolicy,
    WeekWindow,
    Window,
    policy_from_dict,
    window_from_dict,
)

__all__ = [
    "DEFAULT_INPUT_FORMAT",
    "DEFAULT_MAX_DOWNSTREAM_KEYS",
    "AllowedKeyMapper",
    "FanOutMapper",
    "FixedKeyMapper",
    "IdentityMapper",
    "PartitionKeyError",
    "PartitionMapper",
    "ProductMapper",
    "RollupMapper",
    "StartOfDayMapper",
    "StartOfHourMapper",
    "StartOfMonthMapper",
    "StartOfWeekMapper",
    "StartOfYearMapper",
    "mapper_from_dict",
]

DEFAULT_INPUT_FORMAT = "%Y-%m-%dT%H:%M:%S"  # the keys CronPartitionTimetable gives
DEFAULT_MAX_DOWNSTREAM_KEYS = 1000  # Airflow's [scheduler] partition_mapper_max_downstream_keys


class PartitionKeyError(DagDefinitionError):
    """A partition key that does not match what the mapper or timetable expects."""


class PartitionMapper:
    """Maps one upstream key to the downstream key(s) it contributes to."""

    kind: ClassVar[str] = ""
    _registry: ClassVar[dict[str, type[PartitionMapper]]] = {}

    def __init__(self, *, max_downstream_keys: int | None = None) -> None:
        self.max_downstream_keys = max_downstream_keys

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        PartitionMapper._registry[cls.__dict__.get("kind") or
                                  f"{cls.__module__}.{cls.__qualname__}"] = cls

    def to_downstream(self, key: str) -> str | list[str] | None:
        """The downstream key (a list: several; None: the key is dropped)."""
        raise NotImplementedError

    def downstream_keys(self, key: str) -> list[str]:
        mapped = self.to_downstream(key)
        if mapped is None:
            return []
        return [mapped] if isinstance(mapped, str) else list(mapped)

    def serialize(self) -> dict[str, Any]:
        return {}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        kind = type(self).__dict__.get("kind") or \
            f"{type(self).__module__}.{type(self).__qualname__}"
        return {"kind": kind, **self.serialize()}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PartitionMapper) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(repr(self.to_dict()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.serialize()!r})"


def mapper_from_dict(data: dict[str, Any]) -> PartitionMapper:
    """Rebuild a mapper from ``to_dict()``; DagDefinitionError for an unknown kind."""
    fields = dict(data)
    kind = str(fields.pop("kind", ""))
    cls = PartitionMapper._registry.get(kind)
    if cls is None:
        raise DagDefinitionError(f"unknown partition mapper {kind!r}; known: "
                                 f"{', '.join(sorted(PartitionMapper._registry))}.")
    return cls.deserialize(fields)


class IdentityMapper(PartitionMapper):
    kind = "identity"

    def to_downstream(self, key: str) -> str:
        return key


class _TemporalMapper(PartitionMapper):
    default_output_format: ClassVar[str]

    def __init__(self, input_format: str = DEFAULT_INPUT_FORMAT, output_format: str | None = None,
                 *, max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.input_format = input_format
        self.output_format = output_format or type(self).default_output_format

    def decode(self, key: str) -> datetime:
        try:
            return datetime.strptime(key, self.input_format)
        except (TypeError, ValueError):
            raise PartitionKeyError(
                f"partition key {key!r} does not match the format {self.input_format!r} of "
                f"{type(self).__name__}") from None

    def _start(self, moment: datetime) -> datetime:
        raise NotImplementedError

    def period_start(self, key: str) -> datetime:
        return self._start(self.decode(key))

    def to_downstream(self, key: str) -> str:
        return self.period_start(key).strftime(self.output_format)

    def decode_downstream(self, key: str) -> datetime:
        try:
            return datetime.strptime(key, self.output_format)
        except ValueError:
            raise PartitionKeyError(f"partition key {key!r} does not match the format "
                                    f"{self.output_format!r}") from None

    def format_member(self, moment: Any) -> str:
        return str(moment.strftime(self.input_format))

    def serialize(self) -> dict[str, Any]:
        return {"input_format": self.input_format, "output_format": self.output_format,
                **({"max_downstream_keys": self.max_downstream_keys}
                   if self.max_downstream_keys is not None else {})}


class StartOfHourMapper(_TemporalMapper):
    kind = "start_of_hour"
    default_output_format = "%Y-%m-%dT%H"

    def _start(self, moment: datetime) -> datetime:
        return moment.replace(minute=0, second=0, microsecond=0)


class StartOfDayMapper(_TemporalMapper):
    kind = "start_of_day"
    default_output_format = "%Y-%m-%d"

    def _start(self, moment: datetime) -> datetime:
        return moment.replace(hour=0, minute=0, second=0, microsecond=0)


class StartOfWeekMapper(_TemporalMapper):
    kind = "start_of_week"
    default_output_format = "%Y-%m-%d"  # the Monday

    def _start(self, moment: datetime) -> datetime:
        day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        return day - timedelta(days=day.weekday())


class StartOfMonthMapper(_TemporalMapper):
    kind = "start_of_month"
    default_output_format = "%Y-%m"

    def _start(self, moment: datetime) -> datetime:
        return moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


class StartOfYearMapper(_TemporalMapper):
    kind = "start_of_year"
    default_output_format = "%Y"

    def _start(self, moment: datetime) -> datetime:
        return moment.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)


class ProductMapper(PartitionMapper):
    """Composite keys ``a|b|...``: each segment mapped by its own mapper."""

    kind = "product"
    separator = "|"

    def __init__(self, *mappers: PartitionMapper, max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        if not mappers:
            raise DagDefinitionError("ProductMapper needs at least one mapper.")
        self.mappers = list(mappers)

    def to_downstream(self, key: str) -> str:
        parts = key.split(self.separator)
        if len(parts) != len(self.mappers):
            raise PartitionKeyError(
                f"partition key {key!r} has {len(parts)} segment(s) separated by "
                f"{self.separator!r}; ProductMapper expects {len(self.mappers)}")
        out = []
        for mapper, part in zip(self.mappers, parts, strict=True):
            mapped = mapper.downstream_keys(part)
            if len(mapped) != 1:
                raise PartitionKeyError(f"segment {part!r} of {key!r} maps to {mapped!r}")
            out.append(mapped[0])
        return self.separator.join(out)

    def serialize(self) -> dict[str, Any]:
        return {"mappers": [m.to_dict() for m in self.mappers]}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        return cls(*(mapper_from_dict(m) for m in data["mappers"]))


class AllowedKeyMapper(PartitionMapper):
    """Keeps the keys of ``allowed_keys`` unchanged; any other key is refused."""

    kind = "allowed_key"

    def __init__(self, allowed_keys: list[str], *, max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.allowed_keys = [str(k) for k in allowed_keys]

    def to_downstream(self, key: str) -> str:
        if key not in self.allowed_keys:
            raise PartitionKeyError(f"partition key {key!r} is not one of the allowed keys "
                                    f"{self.allowed_keys!r}")
        return key

    def serialize(self) -> dict[str, Any]:
        return {"allowed_keys": self.allowed_keys}


class FixedKeyMapper(PartitionMapper):
    """Every upstream key contributes to the one downstream key ``key``."""

    kind = "fixed_key"

    def __init__(self, key: str, *, max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.key = key

    def to_downstream(self, key: str) -> str:
        return self.key

    def serialize(self) -> dict[str, Any]:
        return {"key": self.key}


_DEFAULT_DOWNSTREAM: dict[type[Window], type[_TemporalMapper]] = {
    DayWindow: StartOfHourMapper, WeekWindow: StartOfDayMapper, MonthWindow: StartOfDayMapper}


class RollupMapper(PartitionMapper):
    """Many upstream keys -> one downstream key, held until the window's members arrive.

    The downstream key is ``upstream_mapper``'s; the members are the window's periods inside
    it, written as upstream keys; ``wait_policy`` says how many must have arrived.
    """

    kind = "rollup"

    def __init__(self, upstream_mapper: PartitionMapper, window: Window,
                 wait_policy: WaitPolicy | None = None, *,
                 max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.upstream_mapper = upstream_mapper
        self.window = window
        self.wait_policy = wait_policy or WaitForAll()

    def to_downstream(self, key: str) -> str | list[str] | None:
        return self.upstream_mapper.to_downstream(key)

    def members(self, downstream_key: str) -> list[str]:
        """The upstream keys the run for ``downstream_key`` waits for."""
        up = self.upstream_mapper
        if isinstance(up, _TemporalMapper):
            start = up.decode_downstream(downstream_key)
            return [up.format_member(m) for m in self.window.to_upstream(start)]
        return [str(m) for m in self.window.to_upstream(downstream_key)]

    def ready(self, downstream_key: str, arrived: set[str]) -> bool:
        members = self.members(downstream_key)
        return self.wait_policy.is_met(len(set(members) & arrived), len(members))

    def serialize(self) -> dict[str, Any]:
        return {"upstream_mapper": self.upstream_mapper.to_dict(),
                "window": self.window.to_dict(), "wait_policy": self.wait_policy.to_dict()}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        return cls(mapper_from_dict(data["upstream_mapper"]), window_from_dict(data["window"]),
                   policy_from_dict(data["wait_policy"]))


class FanOutMapper(PartitionMapper):
    """One upstream key -> one downstream run per member of the window around it."""

    kind = "fan_out"

    def __init__(self, upstream_mapper: PartitionMapper, window: Window,
                 downstream_mapper: PartitionMapper | None = None, *,
                 max_downstream_keys: int | None = None) -> None:
        super().__init__(max_downstream_keys=max_downstream_keys)
        self.upstream_mapper = upstream_mapper
        self.window = window
        if downstream_mapper is None:
            default = _DEFAULT_DOWNSTREAM.get(type(window))
            if default is None:
                raise DagDefinitionError(
                    f"FanOutMapper over {type(window).__name__} needs a downstream_mapper "
                    "(there is no default for this window).")
            downstream_mapper = default()
        self.downstream_mapper = downstream_mapper

    def to_downstream(self, key: str) -> list[str]:
        up, down = self.upstream_mapper, self.downstream_mapper
        anchor: Any = up.period_start(key) if isinstance(up, _TemporalMapper) else \
            up.to_downstream(key)
        members = list(self.window.to_upstream(anchor))
        if isinstance(down, _TemporalMapper):
            return [m.strftime(down.output_format) for m in members]
        return [str(m) for m in members]

    def serialize(self) -> dict[str, Any]:
        return {"upstream_mapper": self.upstream_mapper.to_dict(),
                "window": self.window.to_dict(),
                "downstream_mapper": self.downstream_mapper.to_dict(),
                **({"max_downstream_keys": self.max_downstream_keys}
                   if self.max_downstream_keys is not None else {})}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PartitionMapper:
        return cls(mapper_from_dict(data["upstream_mapper"]), window_from_dict(data["window"]),
                   mapper_from_dict(data["downstream_mapper"]),
                   max_downstream_keys=data.get("max_downstream_keys"))
