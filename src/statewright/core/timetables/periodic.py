"""Cron and timedelta timetables: trigger timetables (Airflow 3's default) and data interval
timetables (Airflow 2's semantics, opt-in).

Cron expressions are evaluated in the DAG's time zone; every returned datetime is aware UTC.
"""

from __future__ import annotations

import abc
import threading
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from croniter import (  # type: ignore[import-untyped]
    CroniterBadCronError,
    CroniterBadDateError,
    croniter,
)

from statewright.core.errors import DagDefinitionError
from statewright.core.timetables._time import (
    as_utc,
    localize,
    resolve_timezone,
    timezone_name,
    to_local_naive,
)
from statewright.core.timetables.base import DagRunInfo, DataInterval, Restriction, Timetable
from statewright.core.timetables.describe import describe_cron

__all__ = [
    "CRON_PRESETS",
    "CronDataIntervalTimetable",
    "CronTriggerTimetable",
    "DeltaDataIntervalTimetable",
    "DeltaTriggerTimetable",
    "expand_cron",
]

#: Airflow's ``cron_presets`` plus croniter's aliases ``@annually`` and ``@midnight``, which
#: Airflow hands to croniter unchanged.
CRON_PRESETS: dict[str, str] = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@quarterly": "0 0 1 */3 *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@midnight": "0 0 * * *",
}

_ONE_HOUR = timedelta(hours=1)
_EPOCH = datetime(2000, 1, 1)  # a fixed naive start for croniter checks


def expand_cron(schedule: str) -> str:
    """The 5-field expression of a cron string or preset; DagDefinitionError if invalid."""
    text = " ".join(schedule.split())
    expression = CRON_PRESETS.get(text.lower(), text)
    if expression.startswith("@"):
        presets = ", ".join(["@once", *CRON_PRESETS])
        raise DagDefinitionError(
            f"schedule {schedule!r} is not a known preset; use one of {presets} "
            "or a 5-field cron expression."
        )
    if len(fields := expression.split()) != 5:
        raise DagDefinitionError(
            f"schedule {schedule!r} is not a valid cron expression: expected 5 fields "
            f"(minute hour day-of-month month day-of-week), got {len(fields)}."
        )
    try:
        croniter(expression, _EPOCH).get_next(datetime)
    except CroniterBadDateError:
        raise DagDefinitionError(
            f"schedule {schedule!r} is not a valid cron expression: it never fires."
        ) from None
    except (CroniterBadCronError, ValueError, KeyError) as exc:
        raise DagDefinitionError(
            f"schedule {schedule!r} is not a valid cron expression: {exc}"
        ) from None
    return expression


class _CronMixin:
    """Next and previous cron times of aware instants, evaluated in the DAG's time zone.

    croniter works on naive wall times. As in Airflow's ``CronMixin``: for a cron whose hour
    field is ``*`` (fires at least hourly) a step is added in absolute time, so the repeated
    hour after clocks go back is not skipped and the skipped hour is not run twice; other
    crons localize the wall time croniter returns (see ``localize``). Steps longer than an
    hour are always localized, so ``0 * * * 1`` keeps its wall time across a DST change.
    """

    def __init__(self, cron: str, *, timezone: str | tzinfo = "UTC") -> None:
        self.summary = " ".join(cron.split())  # as written: "@daily" or "0 6 * * *"
        self.expression = expand_cron(cron)
        self.description = describe_cron(self.expression)
        self.timezone = resolve_timezone(timezone)
        self._every_hour = croniter(self.expression, _EPOCH).expanded[1] == ["*"]
        self._parsed = threading.local()

    def _iterator(self, naive: datetime) -> croniter:
        """A croniter positioned at ``naive``; the parsed expression is kept per thread (parsing
        is most of croniter's cost)."""
        it: croniter | None = getattr(self._parsed, "it", None)
        if it is None:
            it = croniter(self.expression, naive)
            self._parsed.it = it
        else:
            it.set_current(naive, force=True)
        return it

    def _step(self, current: datetime, forward: bool) -> datetime:
        naive = to_local_naive(current, self.timezone)
        it = self._iterator(naive)
        scheduled: datetime = it.get_next(datetime) if forward else it.get_prev(datetime)
        step = scheduled - naive
        if self._every_hour and abs(step) <= _ONE_HOUR:
            return current.astimezone(UTC) + step
        return localize(scheduled, self.timezone)

    def _get_next(self, current: datetime) -> datetime:
        return self._step(current, forward=True)

    def _get_prev(self, current: datetime) -> datetime:
        return self._step(current, forward=False)

    def _align_to_next(self, current: datetime) -> datetime:
        """``current`` if it is a cron time, else the next cron time."""
        nxt = self._get_next(current)
        return current if self._get_prev(nxt) == current else nxt

    def _align_to_prev(self, current: datetime) -> datetime:
        """``current`` if it is a cron time, else the previous cron time."""
        prev = self._get_prev(current)
        return current if self._get_next(prev) == current else prev

    def _fields(self) -> dict[str, Any]:
        return {"expression": self.summary, "timezone": timezone_name(self.timezone)}

    @classmethod
    def _from_fields(cls, data: dict[str, Any]) -> Any:
        return cls(data["expression"], timezone=data["timezone"])


class _DeltaMixin:
    """Fixed steps of ``delta`` in absolute time (a day is 24 hours, whatever DST does)."""

    def __init__(self, delta: timedelta) -> None:
        if not isinstance(delta, timedelta) or delta <= timedelta(0):
            raise DagDefinitionError(
                f"schedule {delta!r} is not a valid interval: a timedelta schedule must be "
                "positive."
            )
        self.delta = delta
        self.summary = f"every {delta}"

    def _get_next(self, current: datetime) -> datetime:
        return current + self.delta

    def _get_prev(self, current: datetime) -> datetime:
        return current - self.delta

    def _align_to_next(self, current: datetime) -> datetime:
        return current

    def _align_to_prev(self, current: datetime) -> datetime:
        return current

    def _fields(self) -> dict[str, Any]:
        return {"delta_seconds": self.delta.total_seconds()}

    @classmethod
    def _from_fields(cls, data: dict[str, Any]) -> Any:
        return cls(timedelta(seconds=float(data["delta_seconds"])))


class _PeriodicTimetable(Timetable, abc.ABC):
    """Steps between schedule times; ``_CronMixin`` or ``_DeltaMixin`` provides them."""

    needs_start_date = True

    @abc.abstractmethod
    def _get_next(self, current: datetime) -> datetime: ...

    @abc.abstractmethod
    def _get_prev(self, current: datetime) -> datetime: ...

    @abc.abstractmethod
    def _align_to_next(self, current: datetime) -> datetime: ...

    @abc.abstractmethod
    def _align_to_prev(self, current: datetime) -> datetime: ...


# --- trigger timetables (Airflow 3's default for cron strings and timedeltas) ------------


class _TriggerTimetable(_PeriodicTimetable):
    """A run at each trigger time ``t``: logical date = data interval = run_after = ``t``."""

    @abc.abstractmethod
    def _latest_at_or_before(self, now: datetime, start: datetime | None) -> datetime: ...

    @abc.abstractmethod
    def _first_without_start(self, now: datetime) -> datetime: ...

    def _next(self, last: DagRunInfo | None, r: Restriction) -> DagRunInfo | None:
        if r.catchup:
            if last is not None:
                fire = self._get_next(last.data_interval_end)
            elif r.earliest is not None:
                fire = self._align_to_next(r.earliest)
            else:
                fire = self._first_without_start(r.now)
        else:
            # Skip missed times: the latest time at or before now, unless a later one is due.
            candidates = [self._latest_at_or_before(r.now, r.earliest)]
            if last is not None:
                candidates.append(self._get_next(last.data_interval_end))
            elif r.earliest is None:
                candidates.append(self._first_without_start(r.now))
            if r.earliest is not None:
                candidates.append(self._align_to_next(r.earliest))
            fire = max(candidates)
        if r.latest is not None and r.latest < fire:
            return None
        return self._info_at(fire)

    def _info_at(self, fire: datetime) -> DagRunInfo:
        interval: timedelta = getattr(self, "interval", timedelta(0))
        return DagRunInfo(logical_date=fire, data_interval_start=fire - interval,
                          data_interval_end=fire, run_after=fire)

    def infer_manual_data_interval(self, run_after: datetime) -> DataInterval:
        at = as_utc(run_after, "run_after")
        return DataInterval(at - getattr(self, "interval", timedelta(0)), at)


class CronTriggerTimetable(_CronMixin, _TriggerTimetable):
    """A cron string or preset: one run at each cron time (Airflow 3's default).

    ``interval`` makes each run's data interval ``[t - interval, t]``; ``run_immediately``
    (without catchup and without a previous run) runs at the latest past cron time at once
    (True), never (False: the default buffer rule), or when it is at most that long ago.
    """

    type_name = "cron_trigger"

    def __init__(self, cron: str, *, timezone: str | tzinfo = "UTC",
                 interval: timedelta = timedelta(0),
                 run_immediately: bool | timedelta = False) -> None:
        super().__init__(cron, timezone=timezone)
        if not isinstance(interval, timedelta) or interval < timedelta(0):
            raise DagDefinitionError(
                f"CronTriggerTimetable interval {interval!r} must be a timedelta >= 0.")
        self.interval = interval
        self.run_immediately = run_immediately

    def _fields(self) -> dict[str, Any]:
        fields = super()._fields()
        if self.interval:
            fields["interval"] = self.interval.total_seconds()
        if self.run_immediately is not False:
            fields["run_immediately"] = (self.run_immediately.total_seconds()
                                         if isinstance(self.run_immediately, timedelta)
                                         else self.run_immediately)
        return fields

    @classmethod
    def _from_fields(cls, data: dict[str, Any]) -> Any:
        ri = data.get("run_immediately", False)
        return cls(data["expression"], timezone=data["timezone"],
                   interval=timedelta(seconds=float(data.get("interval", 0))),
                   run_immediately=ri if isinstance(ri, bool) else timedelta(seconds=ri))

    def _latest_at_or_before(self, now: datetime, start: datetime | None) -> datetime:
        return self._align_to_prev(now)

    def _first_without_start(self, now: datetime) -> datetime:
        # Airflow's CronTriggerTimetable._calc_first_run with run_immediately=False: the
        # previous cron time if it passed less than max(10% of the gap, 5 minutes) ago.
        past, nxt = self._align_to_prev(now), self._align_to_next(now)
        if self.run_immediately is True:
            return past
        if isinstance(self.run_immediately, timedelta):
            return past if now - past <= self.run_immediately else nxt
        buffer = max((nxt - past) / 10, timedelta(minutes=5))
        return past if now - past <= buffer else nxt


class DeltaTriggerTimetable(_DeltaMixin, _TriggerTimetable):
    """A timedelta: one run every ``delta``, on the grid ``start_date + k * delta``."""

    type_name = "delta_trigger"

    def __init__(self, delta: timedelta, *, interval: timedelta = timedelta(0)) -> None:
        super().__init__(delta)
        if not isinstance(interval, timedelta) or interval < timedelta(0):
            raise DagDefinitionError(
                f"DeltaTriggerTimetable interval {interval!r} must be a timedelta >= 0.")
        self.interval = interval

    def _fields(self) -> dict[str, Any]:
        fields = super()._fields()
        if self.interval:
            fields["interval"] = self.interval.total_seconds()
        return fields

    @classmethod
    def _from_fields(cls, data: dict[str, Any]) -> Any:
        return cls(timedelta(seconds=float(data["delta_seconds"])),
                   interval=timedelta(seconds=float(data.get("interval", 0))))

    def _latest_at_or_before(self, now: datetime, start: datetime | None) -> datetime:
        # Airflow uses ``now`` itself; the start_date grid keeps logical dates reproducible
        # when the same decision is computed again after a restart.
        if start is None:
            return now
        if now <= start:
            return start
        return start + ((now - start) // self.delta) * self.delta

    def _first_without_start(self, now: datetime) -> datetime:
        return now


# --- data interval timetables (Airflow 2's semantics; opt-in) ----------------------------


class _DataIntervalTimetable(_PeriodicTimetable):
    """Consecutive intervals ``[t_i, t_{i+1})``; each run is created when its interval ends."""

    @abc.abstractmethod
    def _skip_to_latest(self, earliest: datetime | None, now: datetime) -> datetime: ...

    def _next(self, last: DagRunInfo | None, r: Restriction) -> DagRunInfo | None:
        earliest = r.earliest
        if not r.catchup:
            earliest = self._skip_to_latest(earliest, r.now)
        elif earliest is not None:
            earliest = self._align_to_next(earliest)
        if last is None:
            if earliest is None:
                return None
            begin = earliest
        else:
            begin = self._align_to_prev(last.data_interval_end)
            if earliest is not None:
                begin = max(begin, earliest)
        if r.latest is not None and begin > r.latest:
            return None
        return DagRunInfo.interval(begin, self._get_next(begin))

    def infer_manual_data_interval(self, run_after: datetime) -> DataInterval:
        # The last complete interval before run_after: a daily run triggered at 01:00 on
        # the 25th covers [24th 00:00, 25th 00:00).
        end = self._align_to_prev(as_utc(run_after, "run_after"))
        return DataInterval(self._get_prev(end), end)


class CronDataIntervalTimetable(_CronMixin, _DataIntervalTimetable):
    """A cron schedule whose runs cover the interval between two cron times."""

    type_name = "cron_data_interval"

    def _skip_to_latest(self, earliest: datetime | None, now: datetime) -> datetime:
        # The latest complete interval; if now is on a boundary, the one that ends now.
        last_start = self._get_prev(now)
        if self._get_next(last_start) <= now:
            new_start = last_start
        else:
            new_start = self._get_prev(last_start)
        return new_start if earliest is None else max(new_start, self._align_to_next(earliest))


class DeltaDataIntervalTimetable(_DeltaMixin, _DataIntervalTimetable):
    """A timedelta schedule whose runs cover ``[t, t + delta)``."""

    type_name = "delta_data_interval"

    def _skip_to_latest(self, earliest: datetime | None, now: datetime) -> datetime:
        # As Airflow: round now down to a multiple of delta since the epoch, one delta back.
        seconds = now.timestamp()
        rounded = datetime.fromtimestamp(seconds - seconds % self.delta.total_seconds(), UTC)
        new_start = rounded - self.delta
        return new_start if earliest is None else max(new_start, earliest)


