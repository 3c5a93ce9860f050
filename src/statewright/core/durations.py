"""Durations in words, as a person reads them: ``1 h 30 min``, ``45 s``, ``2 d 3 h``.

One helper for every surface (CLI tables, ``tasks why``, messages), so a timeout of 86400
seconds reads ``1 d`` everywhere, never ``86400.0s``."""

from __future__ import annotations

from datetime import datetime, timedelta

_UNITS = (("d", 86400), ("h", 3600), ("min", 60), ("s", 1))


def duration_words(value: float | timedelta | None) -> str:
    """``value`` (seconds or a timedelta, sign ignored) in at most two units: ``1 h 30 min``,
    ``2 d 3 h``, ``45 s``, ``0.4 s``; ``""`` for None."""
    if value is None:
        return ""
    seconds = abs(value.total_seconds() if isinstance(value, timedelta) else float(value))
    if seconds < 10:
        text = f"{seconds:.1f}".rstrip("0").rstrip(".")
        return f"{text} s"
    whole = round(seconds)
    parts: list[str] = []
    for unit, size in _UNITS:
        count, whole = divmod(whole, size)
        if count and len(parts) < 2:
            parts.append(f"{count} {unit}")
        elif parts:
            break  # two adjacent units at most: "1 d 3 h", never "1 d 12 s"
    return " ".join(parts)


def relative_words(now: datetime, then: datetime | None) -> str:
    """``then`` seen from ``now``: ``5 s ago``, ``in 1 h 30 min``, or ``never``."""
    if then is None:
        return "never"
    delta = (now - then).total_seconds()
    return f"{duration_words(delta)} ago" if delta >= 0 else f"in {duration_words(delta)}"


__all__ = ["duration_words", "relative_words"]
