"""Airflow's timetable API: ``Timetable``, ``DataInterval``, ``TimeRestriction``, ``DagRunInfo``.

A timetable says when a DAG's automated runs happen and which data interval each covers.
Statewright's own timetables implement ``_next`` (a pure function of the last automated run,
the DAG's bounds and an injected ``now``); a timetable written by a user implements Airflow's
``next_dagrun_info(*, last_automated_data_interval, restriction)`` and, optionally,
``infer_manual_data_interval(*, run_after)``, ``serialize`` / ``deserialize``, ``summary`` and
``description``. The scheduler calls ``next_run`` for both kinds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, NamedTuple

from statewright.core.errors import DagDefinitionError
from statewright.core.timetables._time import as_utc, opt_utc

__all__ = [
    "DagRunInfo",
    "DataInterval",
    "TimeRestriction",
    "Timetable",
    "TimetableError",
    "classpath_of",
]


class TimetableError(DagDefinitionError):
    """A timetable (usually one written by a user) raised or answered something unusable."""


class DataInterval(NamedTuple):
    """The span of data a run covers: ``[start, end)`` (Airflow's ``DataInterval``)."""

    start: datetime
    end: datetime

    @classmethod
    def exact(cls, at: datetime) -> DataInterval:
        return cls(at, at)


class TimeRestriction(NamedTuple):
    """A DAG's bounds for its automated runs (Airflow's ``TimeRestriction``)."""

    earliest: datetime | None  # start_date, inclusive
    latest: datetime | None  # end_date, inclusive
    catchup: bool


@dataclass(frozen=True, init=False)
class DagRunInfo:
    """When a run may be created and what it covers. All datetimes are aware UTC.

    Built as statewright does (``logical_date, data_interval_start, data_interval_end,
    run_after``) or as Airflow does (``DagRunInfo(run_after=..., data_interval=...)``).
    ``partition_key`` and ``partition_date`` are set by partitioned timetables.
    """

    logical_date: datetime
    data_interval_start: datetime
    data_interval_end: datetime
    run_after: datetime  # when the run may be created (next_dagrun_create_after)
    partition_key: str | None = None
    partition_date: datetime | None = None

    def __init__(self, logical_date: datetime | None = None,
                 data_interval_start: datetime | None = None,
                 data_interval_end: datetime | None = None, run_after: datetime | None = None,
                 partition_key: str | None = None, partition_date: datetime | None = None, *,
                 data_interval: tuple[datetime, datetime] | None = None) -> None:
        if data_interval is not None:
            data_interval_start, data_interval_end = data_interval
        if run_after is None:
            run_after = data_interval_end or logical_date
        if run_after is None:
            raise TypeError("DagRunInfo needs run_after (or a data interval)")
        start = data_interval_start or logical_date or run_after
        values = {"logical_date": logical_date or start, "data_interval_start": start,
                  "data_interval_end": data_interval_end or start, "run_after": run_after,
                  "partition_key": partition_key, "partition_date": partition_date}
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @property
    def data_interval(self) -> DataInterval:
        return DataInterval(self.data_interval_start, self.data_interval_end)

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

    def normalized(self) -> DagRunInfo:
        """The same run with every datetime aware UTC (a user's timetable may answer pendulum
        datetimes or other time zones); TimetableError for a naive one."""
        try:
            return DagRunInfo(
                logical_date=as_utc(self.logical_date, "logical_date"),
                data_interval_start=as_utc(self.data_interval_start, "data_interval.start"),
                data_interval_end=as_utc(self.data_interval_end, "data_interval.end"),
                run_after=as_utc(self.run_after, "run_after"),
                partition_key=self.partition_key,
                partition_date=opt_utc(self.partition_date, "partition_date"))
        except DagDefinitionError as exc:
            raise TimetableError(f"the timetable answered a run that is not usable: {exc}") \
                from None


class Restriction(NamedTuple):
    """``TimeRestriction`` plus the injected ``now``; all aware UTC (statewright's own rules)."""

    earliest: datetime | None
    latest: datetime | None
    catchup: bool
    now: datetime


def classpath_of(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class Timetable:
    """How a DAG's automated runs are spaced in time (subclass it as in Airflow).

    Statewright's timetables set ``type_name`` (their stored type) and implement ``_next``; a
    user's subclass overrides ``next_dagrun_info`` instead. Every subclass is registered in
    ``Timetable._registry``: built-ins by ``type_name``, others by their import path, which is
    how a stored timetable finds its class again.
    """

    type_name: ClassVar[str] = ""
    periodic: ClassVar[bool] = True
    partitioned: ClassVar[bool] = False
    needs_start_date: ClassVar[bool] = False  # statewright's cron/delta timetables: True
    can_be_scheduled: ClassVar[bool] = True
    run_ordering: ClassVar[tuple[str, ...]] = ("data_interval_end", "logical_date")
    active_runs_limit: ClassVar[int | None] = None
    summary: str = ""  # for people: "0 0 * * *", "@daily", "every 1:00:00", "None"
    description: str = ""  # in words (set by each timetable; see describe.py)
    _registry: ClassVar[dict[str, type[Timetable]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("type_name")
        if isinstance(name, str) and name:
            Timetable._registry[name] = cls
        else:
            Timetable._registry[classpath_of(cls)] = cls
        if not any("summary" in vars(k) for k in cls.__mro__ if k is not Timetable):
            cls.summary = cls.__name__  # Airflow: a custom timetable is summarised by its name

    @classmethod
    def is_builtin(cls) -> bool:
        return bool(cls.__dict__.get("type_name"))

    # -- Airflow's API -------------------------------------------------------------------

    def next_dagrun_info(
        self, *, last_automated_data_interval: DataInterval | None,
        restriction: TimeRestriction,
    ) -> DagRunInfo | None:
        """Airflow's entry point: the next automated run after the last one (None: none)."""
        last = None if last_automated_data_interval is None else DagRunInfo.interval(
            *last_automated_data_interval)
        return self.next_run(last_automated=last, start_date=restriction.earliest,
                             end_date=restriction.latest, catchup=restriction.catchup,
                             now=datetime.now(UTC))

    def infer_manual_data_interval(self, run_after: datetime) -> DataInterval:
        """The data interval of a run triggered by hand at ``run_after``."""
        return DataInterval.exact(as_utc(run_after, "run_after"))

    def serialize(self) -> dict[str, Any]:
        """The JSON-able arguments of this timetable (Airflow's hook; built-ins add ``type``)."""
        if not self.is_builtin():  # a user's class (of a statewright one: its arguments)
            return self._fields()
        return {"type": self.type_name, **self._fields()}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Timetable:
        if cls.is_builtin() or cls is Timetable:
            from statewright.core.timetables.stored import deserialize_timetable

            timetable = deserialize_timetable(data)
            if not isinstance(timetable, cls):
                raise DagDefinitionError(
                    f"stored timetable of type {data.get('type')!r} is not a {cls.__name__}.")
            return timetable
        rebuilt: Timetable = cls._from_fields(data)
        return rebuilt

    def validate(self) -> None:
        """Airflow's hook for checking arguments; raise to refuse the DAG."""

    # -- statewright's entry point --------------------------------------------------------

    def next_run(self, *, last_automated: DagRunInfo | None, start_date: datetime | None,
                 end_date: datetime | None, catchup: bool, now: datetime) -> DagRunInfo | None:
        """The next automated run after ``last_automated`` (None: no run to create).

        ``start_date`` and ``end_date`` bound the logical dates (both inclusive). With
        ``catchup`` every missed run is returned in turn; without it, missed runs are
        skipped and the latest one due at ``now`` (or the next one) is returned.
        """
        earliest = opt_utc(start_date, "start_date")
        latest = opt_utc(end_date, "end_date")
        if type(self).next_dagrun_info is Timetable.next_dagrun_info:
            return self._next(last_automated, Restriction(earliest, latest, catchup,
                                                          as_utc(now, "now")))
        interval = None if last_automated is None else last_automated.data_interval
        try:
            info = self.next_dagrun_info(last_automated_data_interval=interval,
                                         restriction=TimeRestriction(earliest, latest, catchup))
        except Exception as exc:
            raise TimetableError(
                f"timetable {type(self).__name__}.next_dagrun_info raised "
                f"{type(exc).__name__}: {exc}") from exc
        if info is not None and not isinstance(info, DagRunInfo):
            raise TimetableError(
                f"timetable {type(self).__name__}.next_dagrun_info returned "
                f"{type(info).__name__}; return a DagRunInfo or None.")
        return None if info is None else info.normalized()

    def _next(self, last: DagRunInfo | None, r: Restriction) -> DagRunInfo | None:
        """``next_run`` with every datetime of ``r`` already aware UTC (built-ins)."""
        raise NotImplementedError(f"{type(self).__name__} must implement next_dagrun_info")

    def _fields(self) -> dict[str, Any]:
        return {}

    @classmethod
    def _from_fields(cls, data: dict[str, Any]) -> Any:
        return cls()

    def iter_between(self, start: datetime, end: datetime) -> Any:
        """Every automated run whose logical date lies in ``[start, end]`` (for backfill).

        Nothing for ``None`` and ``@once``: backfill needs a time-based schedule.
        """
        first, last_date = as_utc(start, "backfill start"), as_utc(end, "backfill end")
        if not self.periodic:
            return
        last: DagRunInfo | None = None
        while (info := self.next_run(last_automated=last, start_date=first,
                                     end_date=last_date, catchup=True,
                                     now=last_date)) is not None:
            if last is not None and info.logical_date <= last.logical_date:
                return
            yield info
            last = info

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Timetable):
            return NotImplemented
        return type(self) is type(other) and self.serialize() == other.serialize()

    def __hash__(self) -> int:
        return hash((type(self), repr(sorted(self.serialize().items()))))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.summary!r})"
