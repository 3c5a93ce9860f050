"""Timezone helpers with the names and behaviour of Airflow's ``airflow.utils.timezone``.

A naive datetime is taken to be in the default timezone, UTC. The functions that build a
datetime from another value (``convert_to_utc``, ``coerce_datetime``, ``parse``,
``from_timestamp``) return ``pendulum.DateTime`` objects, as Airflow's do.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pendulum
from dateutil.relativedelta import relativedelta
from pendulum.datetime import DateTime

__all__ = [
    "coerce_datetime",
    "convert_to_utc",
    "datetime",
    "from_timestamp",
    "is_localized",
    "is_naive",
    "local_timezone",
    "make_aware",
    "make_naive",
    "parse",
    "parse_timezone",
    "td_format",
    "utc",
    "utcnow",
]

utc = pendulum.UTC
DEFAULT_TIMEZONE: dt.tzinfo = utc
"""Where a naive datetime is taken to be (Airflow's ``core.default_timezone``, default UTC)."""


def is_localized(value: dt.datetime) -> bool:
    """Whether ``value`` is aware (has a UTC offset)."""
    return value.utcoffset() is not None


def is_naive(value: dt.datetime) -> bool:
    """Whether ``value`` is naive (has no UTC offset)."""
    return value.utcoffset() is None


def utcnow() -> dt.datetime:
    """The current date and time in UTC."""
    return dt.datetime.now(tz=utc)


def convert_to_utc(value: dt.datetime | None) -> DateTime | None:
    """``value`` in UTC; a naive value is first taken to be in the default timezone."""
    if value is None:
        return None
    if not is_localized(value):
        value = pendulum.instance(value, DEFAULT_TIMEZONE)
    return pendulum.instance(value.astimezone(utc))


def make_aware(value: dt.datetime | None, timezone: dt.tzinfo | None = None
               ) -> dt.datetime | None:
    """The naive ``value`` placed in ``timezone`` (the default timezone when None); the later
    of two equal wall-clock times when the clock goes back. An aware value is a ValueError."""
    timezone = DEFAULT_TIMEZONE if timezone is None else timezone
    if not value:
        return None
    if is_localized(value):
        raise ValueError(f"make_aware expects a naive datetime, got {value}")
    value = value.replace(fold=1)
    localize = getattr(timezone, "localize", None)  # pytz
    if localize is not None:
        return localize(value)  # type: ignore[no-any-return]
    convert = getattr(timezone, "convert", None)  # pendulum
    if convert is not None:
        return convert(value)  # type: ignore[no-any-return]
    return value.replace(tzinfo=timezone)


def make_naive(value: dt.datetime, timezone: dt.tzinfo | None = None) -> dt.datetime:
    """The aware ``value`` as a naive wall-clock time in ``timezone`` (default: UTC)."""
    if is_naive(value):
        raise ValueError("make_naive() cannot be applied to a naive datetime")
    local = value.astimezone(DEFAULT_TIMEZONE if timezone is None else timezone)
    return dt.datetime(local.year, local.month, local.day, local.hour, local.minute,
                       local.second, local.microsecond)


def datetime(*args: Any, **kwargs: Any) -> dt.datetime:
    """``datetime.datetime(...)``, in the default timezone unless ``tzinfo`` is given."""
    kwargs.setdefault("tzinfo", DEFAULT_TIMEZONE)
    return dt.datetime(*args, **kwargs)


def parse(string: str, timezone: dt.tzinfo | str | None = None, *, strict: bool = False
          ) -> DateTime:
    """An aware datetime parsed from ``string`` (in ``timezone``, or the default timezone,
    when the string names none)."""
    parsed = pendulum.parse(string, tz=timezone or DEFAULT_TIMEZONE, strict=strict)
    if not isinstance(parsed, DateTime):
        raise ValueError(f"{string!r} is not a date and time")
    return parsed


def coerce_datetime(value: dt.datetime | None, tz: dt.tzinfo | None = None
                    ) -> DateTime | None:
    """``value`` as an aware ``pendulum.DateTime``: a naive value is placed in ``tz`` (or the
    default timezone); an aware one keeps its own timezone."""
    if value is None:
        return None
    if isinstance(value, DateTime) and value.tzinfo is not None:
        return value
    return pendulum.instance(value if value.tzinfo else make_aware(value, tz))  # type: ignore[arg-type]


def td_format(td_object: dt.timedelta | float | None) -> str | None:
    """A duration as Airflow shows it: ``timedelta(seconds=3752)`` → ``1h:2M:32s``; under a
    second ``<1s``; None for an empty duration."""
    if not td_object:
        return None
    if isinstance(td_object, dt.timedelta):
        delta = relativedelta() + td_object
    else:
        delta = relativedelta(seconds=int(td_object))
    months, delta.days = divmod(delta.days, 30)  # months of 30 days, as Airflow counts them
    delta = delta.normalized() + relativedelta(months=months)
    parts = []
    for unit in ("years", "months", "days", "hours", "minutes", "seconds"):
        value = int(getattr(delta, unit))
        if value >= 1:
            parts.append(f"{value}{'M' if unit == 'minutes' else unit[0]}")
    return ":".join(parts) or "<1s"


def parse_timezone(name: str | int) -> Any:
    """The pendulum timezone named ``name`` (an IANA name, or an offset from UTC in
    seconds)."""
    return pendulum.timezone(name)


def local_timezone() -> Any:
    """This machine's timezone."""
    return pendulum.tz.local_timezone()


def from_timestamp(timestamp: float, tz: Any = utc) -> DateTime:
    """The moment of the POSIX ``timestamp`` in ``tz`` (a timezone, an IANA name, or
    ``"local"``)."""
    result = pendulum.instance(dt.datetime.fromtimestamp(timestamp, tz=utc))
    if isinstance(tz, str) and tz.lower() == "local":
        tz = local_timezone()
    return result.in_timezone(tz)
