"""Time helpers of the timetables: aware UTC instants, time zones, local wall times."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from statewright.core.errors import DagDefinitionError

_OFFSET = re.compile(r"^(?:UTC)?([+-])(\d{2}):?(\d{2})$")


def as_utc(moment: datetime, what: str) -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise DagDefinitionError(
            f"{what} {moment.isoformat()} has no time zone; pass an aware datetime "
            "(for example datetime(2026, 1, 1, tzinfo=UTC))."
        )
    moment = moment.astimezone(UTC)
    if type(moment) is not datetime:  # a subclass (pendulum's DateTime): a plain datetime
        return datetime(moment.year, moment.month, moment.day, moment.hour, moment.minute,
                        moment.second, moment.microsecond, tzinfo=UTC)
    return moment.replace(fold=0)


def opt_utc(moment: datetime | None, what: str) -> datetime | None:
    return None if moment is None else as_utc(moment, what)


def resolve_timezone(tz: str | tzinfo) -> tzinfo:
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
        return resolve_timezone(key)
    raise DagDefinitionError(
        f"time zone {tz!r} of type {type(tz).__name__} is not supported: "
        "pass an IANA name such as 'Europe/Berlin' or a zoneinfo.ZoneInfo."
    )


def timezone_name(tz: tzinfo) -> str:
    if isinstance(tz, ZoneInfo):
        return tz.key
    offset = tz.utcoffset(None) or timedelta(0)
    if not offset:
        return "UTC"
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(offset) // timedelta(minutes=1)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def to_local_naive(moment: datetime, tz: tzinfo) -> datetime:
    return moment.astimezone(tz).replace(tzinfo=None, fold=0)


def localize(naive: datetime, tz: tzinfo) -> datetime:
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
