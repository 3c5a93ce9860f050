"""A timetable's schedule in words, for the UI's DAG header and ``dags next-execution``."""

from __future__ import annotations

from datetime import timedelta

from statewright.core.timetables.base import Timetable

__all__ = ["describe_cron", "describe_timetable"]

_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]


_DAY_NAMES = {d[:3].lower(): i for i, d in enumerate(_DAYS)}


def _plain(field: str) -> bool:
    return field.isdigit()


def _day(token: str) -> int | None:
    token = token.lower()
    if token.isdigit() and 0 <= int(token) <= 7:
        return int(token) % 7
    return _DAY_NAMES.get(token)


def _joined(names: list[str]) -> str:
    return " and ".join(names) if len(names) <= 2 else ", ".join(names[:-1]) + " and " + names[-1]


def _days_of_week(field: str) -> str:
    if field in ("*", "?"):
        return ""
    if field in ("1-5", "mon-fri"):
        return "on weekdays (Monday to Friday)"
    names = []
    for part in field.split(","):
        first, dash, last = part.partition("-")
        a, b = _day(first), _day(last) if dash else None
        if a is None or (dash and b is None):
            return f"on days of the week {field}"
        names.append(f"{_DAYS[a]} to {_DAYS[b]}" if b is not None else _DAYS[a])
    return "on " + _joined(names)


def _time_of_day(minute: str, hour: str) -> str:
    if _plain(minute) and _plain(hour):
        return f"at {int(hour):02d}:{int(minute):02d}"
    if _plain(minute) and hour == "*":
        return f"every hour at minute {int(minute)}"
    if _plain(minute) and hour.startswith("*/"):
        return f"every {hour[2:]} hours at minute {int(minute)}"
    if minute.startswith("*/") and hour == "*":
        return f"every {minute[2:]} minutes"
    if minute == "*" and hour == "*":
        return "every minute"
    return f"at minute {minute} past hour {hour}"


def describe_cron(expression: str) -> str:
    """A 5-field cron expression in words: ``'30 6 * * 1-5'`` → ``'At 06:30, on weekdays
    (Monday to Friday)'``, ``'0 */4 * * *'`` → ``'Every 4 hours at minute 0'`` (the fields
    themselves for what it cannot say shortly)."""
    fields = expression.split()
    if len(fields) != 5:
        return f"Cron {expression!r}"
    minute, hour, dom, month, dow = fields
    parts = [_time_of_day(minute, hour)]
    if dom != "*":
        parts.append(f"on day {dom} of the month")
    if month != "*":
        parts.append(f"in {_MONTHS[int(month) - 1]}" if _plain(month) and 1 <= int(month) <= 12
                     else f"in months {month}")
    if (days := _days_of_week(dow)):
        parts.append(days)
    elif dom == "*" and month == "*" and _plain(hour) and _plain(minute):
        parts.append("every day")
    text = ", ".join(parts)
    return text[0].upper() + text[1:]


def _delta(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            n = seconds // size
            return f"{n} {unit}" + ("s" if n != 1 else "")
    return f"{seconds} seconds"


def describe_timetable(timetable: Timetable) -> str:
    """What the schedule does, in one sentence."""
    from statewright.core.timetables.events import MultipleCronTriggerTimetable
    from statewright.core.timetables.periodic import _CronMixin, _DeltaMixin
    from statewright.core.timetables.simple import NullTimetable, OnceTimetable

    if isinstance(timetable, NullTimetable):
        return "Never on its own: runs only when triggered"
    if isinstance(timetable, OnceTimetable):
        return "Once, at the start date"
    zone = getattr(timetable, "timezone", None)
    suffix = ""
    if zone is not None:
        from statewright.core.timetables._time import timezone_name

        suffix = f" ({timezone_name(zone)})"
    if isinstance(timetable, MultipleCronTriggerTimetable):
        inner = "; ".join(describe_cron(t.expression) for t in timetable.timetables)
        return f"{inner}{suffix}"
    if isinstance(timetable, _CronMixin):
        text = describe_cron(timetable.expression) + suffix
        if timetable.type_name.startswith("cron_data"):
            text += "; each run covers the interval up to that time"
        return text
    if isinstance(timetable, _DeltaMixin):
        return f"Every {_delta(timetable.delta)} from the start date"
    return timetable.description or str(timetable.summary)
