"""Windows and wait policies of partition rollups and fan-outs (Airflow's names).

A window lists the upstream periods inside one downstream period: ``DayWindow`` the 24 hours of
a day, ``WeekWindow`` the 7 days of a week, ``MonthWindow`` the days of a calendar month,
``SegmentWindow`` a fixed list of keys. ``Window.Direction.BACKWARD`` gives the periods that
end at the anchor instead of those that start at it. ``WaitForAll`` holds a rollup until every
member arrived; ``MinimumCount(n)`` until ``n`` did (a negative ``n``: all but ``-n``).
"""

from __future__ import annotations

import calendar
import enum
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, ClassVar

from statewright.core.errors import DagDefinitionError

__all__ = [
    "DayWindow",
    "MinimumCount",
    "MonthWindow",
    "SegmentWindow",
    "WaitForAll",
    "WaitPolicy",
    "WeekWindow",
    "Window",
    "policy_from_dict",
    "window_from_dict",
]


class _Direction(enum.Enum):
    FORWARD = "forward"
    BACKWARD = "backward"


class Window:
    """The members of one period; subclass it and implement ``to_upstream``."""

    Direction = _Direction
    kind: ClassVar[str] = ""
    _registry: ClassVar[dict[str, type[Window]]] = {}

    def __init__(self, direction: _Direction = _Direction.FORWARD) -> None:
        self.direction = _Direction(direction)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        Window._registry[cls.__dict__.get("kind") or
                         f"{cls.__module__}.{cls.__qualname__}"] = cls

    def to_upstream(self, period_start: Any) -> Iterable[Any]:
        raise NotImplementedError

    def serialize(self) -> dict[str, Any]:
        return {"direction": self.direction.value}

    def to_dict(self) -> dict[str, Any]:
        kind = type(self).__dict__.get("kind") or \
            f"{type(self).__module__}.{type(self).__qualname__}"
        return {"kind": kind, **self.serialize()}


class _StepWindow(Window):
    step: ClassVar[timedelta]
    count: ClassVar[int]

    def to_upstream(self, period_start: datetime) -> list[datetime]:
        if self.direction is _Direction.BACKWARD:
            return [period_start - self.step * i for i in range(self.count - 1, -1, -1)]
        return [period_start + self.step * i for i in range(self.count)]


class DayWindow(_StepWindow):
    kind = "day"
    step = timedelta(hours=1)
    count = 24


class WeekWindow(_StepWindow):
    kind = "week"
    step = timedelta(days=1)
    count = 7


class MonthWindow(Window):
    kind = "month"

    def to_upstream(self, period_start: datetime) -> list[datetime]:
        if self.direction is _Direction.BACKWARD:
            month_before = (period_start.replace(day=1) - timedelta(days=1)).replace(day=1)
            days = calendar.monthrange(month_before.year, month_before.month)[1]
            return [month_before + timedelta(days=i) for i in range(days)]
        days = calendar.monthrange(period_start.year, period_start.month)[1]
        return [period_start + timedelta(days=i) for i in range(days)]


class SegmentWindow(Window):
    """A fixed set of keys (regions, shards): every one is a member."""

    kind = "segment"

    def __init__(self, segments: Iterable[str],
                 direction: _Direction = _Direction.FORWARD) -> None:
        super().__init__(direction)
        self.segments = [str(s) for s in segments]
        if not self.segments:
            raise DagDefinitionError("SegmentWindow needs at least one segment.")

    def to_upstream(self, period_start: Any) -> list[str]:
        return list(self.segments)

    def serialize(self) -> dict[str, Any]:
        return {"segments": self.segments, **super().serialize()}


def window_from_dict(data: dict[str, Any]) -> Window:
    fields = dict(data)
    cls = Window._registry.get(str(fields.pop("kind", "")))
    if cls is None:
        raise DagDefinitionError(f"unknown partition window {data.get('kind')!r}.")
    direction = _Direction(fields.pop("direction", "forward"))
    if cls is SegmentWindow:
        return SegmentWindow(fields["segments"], direction)
    window = cls(direction)
    return window


class WaitPolicy:
    """When a rollup with ``arrived`` of ``total`` members may run."""

    def is_met(self, arrived: int, total: int) -> bool:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError


class WaitForAll(WaitPolicy):
    def is_met(self, arrived: int, total: int) -> bool:
        return arrived >= total

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "all"}


class MinimumCount(WaitPolicy):
    def __init__(self, count: int) -> None:
        if not isinstance(count, int) or count == 0:
            raise DagDefinitionError(f"MinimumCount({count!r}): give a non-zero whole number "
                                     "(negative: how many members may be missing).")
        self.count = count

    def is_met(self, arrived: int, total: int) -> bool:
        need = self.count if self.count > 0 else total + self.count
        return arrived >= max(1, min(need, total))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "minimum", "count": self.count}


def policy_from_dict(data: dict[str, Any]) -> WaitPolicy:
    if data.get("kind") == "minimum":
        return MinimumCount(int(data["count"]))
    return WaitForAll()
