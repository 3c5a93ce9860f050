"""Timetables: when a DAG's scheduled runs happen, and which data interval each one covers.

Pure functions over datetimes (no I/O). The semantics follow Apache Airflow 3's defaults:

* ``schedule=None`` never schedules (manual runs only); ``"@once"`` schedules one run.
* A cron string or preset is a *trigger* timetable (Airflow 3's
  ``[scheduler] create_cron_data_intervals = False``): a run fires at each cron time, and its
  logical date, data interval start, data interval end and ``run_after`` are all that time.
* A ``timedelta`` is a trigger timetable that fires every ``delta`` from ``start_date``.
* ``data_intervals=True`` (or a ``Cron/DeltaDataIntervalTimetable``) gives Airflow 2's
  interval semantics: a run covers ``[t_i, t_{i+1})`` and is created at ``t_{i+1}``.

Cron expressions are evaluated in the DAG's time zone and every returned datetime is
timezone-aware UTC. See docs/schedules.md.
"""

from __future__ import annotations

import abc
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any, ClassVar, NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import (  # type: ignore[import-untyped]
    CroniterBadCronError,
    CroniterBadDateError,
    croniter,
)

from statewright.core.errors import DagDefinitionError

__all__ = [
    "CRON_PRESETS",
    "RUN_TYPES",
    "CronDataIntervalTimetable",
    "CronTriggerTimetable",
    "DagRunInfo",
    "DeltaDataIntervalTimetable",
    "DeltaTriggerTimetable",
    "NullTimetable",
    "OnceTimetable",
    "Timetable",
    "deserialize_timetable",
    "parse_schedule",
    "run_id_for",
    "validate_schedule_args",
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

#: The run types of ``run_id_for`` (Airflow's ``DagRunType`` values).
RUN_TYPES = frozenset({"scheduled", "manual", "backfill", "asset_triggered"})

_ONE_HOUR = timedelta(hours=1)
_EPOCH = datetime(2000, 1, 1)  # a fixed naive start for croniter checks
_OFFSET = re.compile(r"^(?:UTC)?([+-])(\d{2}):?(\d{2})$")


@dataclass(frozen=True)
class DagRunInfo:
    """When a run may be created and what it covers. All four datetimes are aware UTC."""

    logical_date: datetime
    data_interval_start: datetime
    data_interval_end: datetime
    run_after: datetime  # when the run may be created (next_dagrun_create_after)

    @classmethod
    def exact(cls, at: datetime) -> DagRunInfo:
        """A run at one instant: a zero-width data interval, created at that instant."""
        return cls(logical_date=at, data_interval_start=at, data_interval_end=at, run_after=at)

    @classmethod
    def interval(cls, start: datetime, end: datetime) -> DagRunInfo:
        """A run over ``[start, end)``, created once the interval has ended."""
        return cls(
            logical_date=start, data_interval_start=start, data_interval_end=end, run_after=end
        )


class _Restriction(NamedTuple):
    """Airflow's ``TimeRestriction`` plus the injected ``now``; all aware UTC."""

    earliest: datetime | None  # start_date, inclusive
    latest: datetime | None  # end_date, inclusive
    catchup: bool
    now: datetime


# --- time helpers ------------------------------------------------------------------------


def _as_utc(moment: datetime, what: str) -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise DagDefinitionError(
            f"{what} {moment.isoformat()} has no time zone; pass an aware datetime "
            "(for example datetime(2026, 1, 1, tzinfo=UTC))."
        )
    return moment.astimezone(UTC).replace(fold=0)


def _opt_utc(moment: datetime | None, what: str) -> datetime | None:
    return None if moment is None else _as_utc(moment, what)


def _resolve_timezone(tz: str | tzinfo) -> tzinfo:
    """A ``ZoneInfo`` or a fixed-offset ``timezone`` for a name, an offset or a tzinfo."""
    if isinstance(tz, str):
        name = tz.strip()
        if name.upper() in ("UTC", "Z"):
            return UTC
        if match := _OFFSET.match(name):
            sign, hours, minutes = match.groups()
            offset = timedelta(hours=int(hours), minutes=int(minutes))
            return timezone(-offset if sign == "-" else offset)
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
            raise DagDefinitionError(
                f"unknown time zone {tz!r}: use an IANA name such as 'Europe/Berlin', "
                f"'UTC' or an offset such as '+02:00' ({exc.__class__.__name__})."
            ) from None
    if isinstance(tz, ZoneInfo | timezone):
        return tz
    key = getattr(tz, "key", None) or getattr(tz, "zone", None) or getattr(tz, "name", None)
    if isinstance(key, str):
        return _resolve_timezone(key)
    raise DagDefinitionError(
        f"time zone {tz!r} of type {type(tz).__name__} is not supported: "
        "pass an IANA name such as 'Europe/Berlin' or a zoneinfo.ZoneInfo."
    )


def _timezone_name(tz: tzinfo) -> str:
    if isinstance(tz, ZoneInfo):
        return tz.key
    offset = tz.utcoffset(None) or timedelta(0)
    if not offset:
        return "UTC"
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(offset) // timedelta(minutes=1)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _to_local_naive(moment: datetime, tz: tzinfo) -> datetime:
    return moment.astimezone(tz).replace(tzinfo=None, fold=0)


def _localize(naive: datetime, tz: tzinfo) -> datetime:
    """The UTC instant of a local wall time, the way Airflow's ``make_aware`` picks it.

    A wall time repeated when clocks go back is read as its *second* occurrence (fold=1);
    a wall time skipped when clocks go forward is moved forward by the gap (02:30 in a
    02:00->03:00 jump becomes 03:30 local, i.e. the old offset applied to 02:30).
    """
    early = naive.replace(tzinfo=tz, fold=0)
    late = naive.replace(tzinfo=tz, fold=1)
    early_offset, late_offset = early.utcoffset(), late.utcoffset()
    assert early_offset is not None and late_offset is not None
    chosen = early if late_offset > early_offset else late
    return chosen.astimezone(UTC).replace(fold=0)


# --- the base class ----------------------------------------------------------------------


class Timetable(abc.ABC):
    """How a DAG's automated runs are spaced in time.

    ``next_dagrun_info`` is a pure function of the last automated (scheduled or backfill)
    run, the DAG's ``start_date``/``end_date``/``catchup`` and the injected ``now``.
    """

    type_name: ClassVar[str]
    periodic: ClassVar[bool] = True
    summary: str  # for people: "0 0 * * *", "@daily", "every 1:00:00", "None"
    _registry: ClassVar[dict[str, type[Timetable]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if isinstance(name := cls.__dict__.get("type_name"), str):
            Timetable._registry[name] = cls

    def next_dagrun_info(
        self,
        *,
        last_automated: DagRunInfo | None,
        start_date: datetime | None,
        end_date: datetime | None,
        catchup: bool,
        now: datetime,
    ) -> DagRunInfo | None:
        """The next automated run after ``last_automated`` (None: no run to create).

        ``start_date`` and ``end_date`` bound the logical dates (both inclusive). With
        ``catchup`` every missed run is returned in turn; without it, missed runs are
        skipped and the latest one due at ``now`` (or the next one) is returned.
        """
        earliest = _opt_utc(start_date, "start_date")
        latest = _opt_utc(end_date, "end_date")
        return self._next(
            last_automated, _Restriction(earliest, latest, catchup, _as_utc(now, "now"))
        )

    @abc.abstractmethod
    def _next(self, last: DagRunInfo | None, r: _Restriction) -> DagRunInfo | None:
        """``next_dagrun_info`` with every datetime of ``r`` already aware UTC."""

    def infer_manual_data_interval(self, run_after: datetime) -> tuple[datetime, datetime]:
        """The data interval of a run triggered by hand at ``run_after``."""
        at = _as_utc(run_after, "run_after")
        return at, at

    def serialize(self) -> dict[str, Any]:
        return {"type": self.type_name, **self._fields()}

    def _fields(self) -> dict[str, Any]:
        return {}

    @classmethod
    def _from_fields(cls, data: dict[str, Any]) -> Any:
        return cls()

    @classmethod
    def deserialize(cls, d: dict[str, Any]) -> Timetable:
        timetable = deserialize_timetable(d)
        if not isinstance(timetable, cls):
            raise DagDefinitionError(
                f"stored timetable of type {d.get('type')!r} is not a {cls.__name__}."
            )
        return timetable

    def iter_between(self, start: datetime, end: datetime) -> Iterator[DagRunInfo]:
        """Every automated run whose logical date lies in ``[start, end]`` (for backfill).

        Nothing for ``None`` and ``@once``: backfill needs a time-based schedule.
        """
        first, last_date = _as_utc(start, "backfill start"), _as_utc(end, "backfill end")
        if not self.periodic:
            return
        last: DagRunInfo | None = None
        bounds = _Restriction(first, last_date, True, last_date)
        while (info := self._next(last, bounds)) is not None:
            if last is not None and info.logical_date <= last.logical_date:
                return
            yield info
            last = info

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Timetable):
            return NotImplemented
        return type(self) is type(other) and self.serialize() == other.serialize()

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.serialize().items())))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.summary!r})"


def deserialize_timetable(d: dict[str, Any]) -> Timetable:
    """Rebuild a timetable from ``Timetable.serialize()``, dispatching on ``d["type"]``."""
    kind = d.get("type") if isinstance(d, dict) else None
    cls = Timetable._registry.get(kind) if isinstance(kind, str) else None
    if cls is None:
        known = ", ".join(sorted(Timetable._registry))
        raise DagDefinitionError(
            f"stored timetable {d!r} has an unknown type {kind!r}; known types: {known}."
        )
    timetable: Timetable = cls._from_fields(d)
    return timetable


# --- manual-only and once ----------------------------------------------------------------


class NullTimetable(Timetable):
    """``schedule=None``: never schedules; runs are triggered by hand (or by the API)."""

    type_name = "null"
    periodic = False
    summary = "None"

    def _next(self, last: DagRunInfo | None, r: _Restriction) -> DagRunInfo | None:
        return None


class OnceTimetable(Timetable):
    """``"@once"``: one run at ``start_date`` (or ``now`` without one), whatever ``catchup``."""

    type_name = "once"
    periodic = False
    summary = "@once"

    def _next(self, last: DagRunInfo | None, r: _Restriction) -> DagRunInfo | None:
        if last is not None:
            return None
        run_after = r.earliest or r.now
        if r.latest is not None and run_after > r.latest:
            return None
        return DagRunInfo.exact(run_after)


# --- cron and delta arithmetic -----------------------------------------------------------


def _expand_cron(schedule: str) -> str:
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
    crons localize the wall time croniter returns (see ``_localize``). Steps longer than an
    hour are always localized, so ``0 * * * 1`` keeps its wall time across a DST change.
    """

    def __init__(self, cron: str, *, timezone: str | tzinfo = "UTC") -> None:
        self.summary = " ".join(cron.split())  # as written: "@daily" or "0 6 * * *"
        self.expression = _expand_cron(cron)
        self.timezone = _resolve_timezone(timezone)
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
        naive = _to_local_naive(current, self.timezone)
        it = self._iterator(naive)
        scheduled: datetime = it.get_next(datetime) if forward else it.get_prev(datetime)
        step = scheduled - naive
        if self._every_hour and abs(step) <= _ONE_HOUR:
            return current.astimezone(UTC) + step
        return _localize(scheduled, self.timezone)

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
        return {"expression": self.summary, "timezone": _timezone_name(self.timezone)}

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


class _PeriodicTimetable(Timetable):
    """Steps between schedule times; ``_CronMixin`` or ``_DeltaMixin`` provides them."""

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

    def _next(self, last: DagRunInfo | None, r: _Restriction) -> DagRunInfo | None:
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
        return DagRunInfo.exact(fire)


class CronTriggerTimetable(_CronMixin, _TriggerTimetable):
    """A cron string or preset: one run at each cron time (Airflow 3's default)."""

    type_name = "cron_trigger"

    def _latest_at_or_before(self, now: datetime, start: datetime | None) -> datetime:
        return self._align_to_prev(now)

    def _first_without_start(self, now: datetime) -> datetime:
        # Airflow's CronTriggerTimetable._calc_first_run with run_immediately=False: the
        # previous cron time if it passed less than max(10% of the gap, 5 minutes) ago.
        past, nxt = self._align_to_prev(now), self._align_to_next(now)
        buffer = max((nxt - past) / 10, timedelta(minutes=5))
        return past if now - past <= buffer else nxt


class DeltaTriggerTimetable(_DeltaMixin, _TriggerTimetable):
    """A timedelta: one run every ``delta``, on the grid ``start_date + k * delta``."""

    type_name = "delta_trigger"

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

    def _next(self, last: DagRunInfo | None, r: _Restriction) -> DagRunInfo | None:
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

    def infer_manual_data_interval(self, run_after: datetime) -> tuple[datetime, datetime]:
        # The last complete interval before run_after: a daily run triggered at 01:00 on
        # the 25th covers [24th 00:00, 25th 00:00).
        end = self._align_to_prev(_as_utc(run_after, "run_after"))
        return self._get_prev(end), end


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


# --- entry points ------------------------------------------------------------------------


def parse_schedule(
    schedule: str | timedelta | Timetable | None,
    *,
    timezone: str | tzinfo = "UTC",
    data_intervals: bool = False,
) -> Timetable:
    """The timetable of a DAG's ``schedule=`` argument.

    ``data_intervals`` plays the part of Airflow's ``[scheduler] create_cron_data_intervals``
    (False by default in Airflow 3): when True, cron strings and timedeltas give data
    interval timetables instead of trigger timetables.
    """
    if isinstance(schedule, Timetable):
        return schedule
    if schedule is None:
        return NullTimetable()
    if isinstance(schedule, str):
        text = schedule.strip().lower()
        if text == "@once":
            return OnceTimetable()
        if text == "@continuous":
            raise DagDefinitionError(
                "schedule '@continuous' is not supported; use a cron expression or a timedelta."
            )
        if data_intervals:
            return CronDataIntervalTimetable(schedule, timezone=timezone)
        return CronTriggerTimetable(schedule, timezone=timezone)
    if isinstance(schedule, timedelta):
        if data_intervals:
            return DeltaDataIntervalTimetable(schedule)
        return DeltaTriggerTimetable(schedule)
    raise DagDefinitionError(
        f"schedule {schedule!r} of type {type(schedule).__name__} is not supported: use None, "
        "a cron expression such as '0 6 * * *', a preset such as '@daily', '@once', "
        "a positive timedelta or a Timetable."
    )


def validate_schedule_args(
    timetable: Timetable, start_date: datetime | None, end_date: datetime | None
) -> None:
    """Check a DAG's schedule arguments; raise DagDefinitionError naming the bad value.

    Airflow 3 lets a periodic DAG omit ``start_date`` (its first run is then computed from
    the current time); statewright requires one so that every scheduled run is reproducible.
    """
    start = _opt_utc(start_date, "start_date")
    end = _opt_utc(end_date, "end_date")
    if timetable.periodic and start is None:
        raise DagDefinitionError(
            f"DAG needs a start_date for schedule {timetable.summary!r}: pass an aware "
            "datetime such as start_date=datetime(2026, 1, 1, tzinfo=UTC)."
        )
    if start is not None and end is not None and end < start:
        raise DagDefinitionError(
            f"end_date {end.isoformat()} is before start_date {start.isoformat()}; "
            "move end_date later or remove it."
        )


def run_id_for(run_type: str, logical_date_or_time: datetime) -> str:
    """Airflow's run id ``"<run_type>__<UTC isoformat>"``.

    For example ``scheduled__2026-01-01T00:00:00+00:00``. Pass the logical date of scheduled
    and backfill runs (equal to ``run_after`` under trigger timetables), and the logical
    date or the trigger time of manual runs.
    """
    kind = str(getattr(run_type, "value", run_type))
    if kind not in RUN_TYPES:
        raise ValueError(f"unknown run type {run_type!r}; expected one of {sorted(RUN_TYPES)}.")
    moment = _as_utc(logical_date_or_time, "run id date")
    return f"{kind}__{moment.isoformat()}"
