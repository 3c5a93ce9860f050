"""Durations in words: the one helper the CLI prints timeouts, ages and delays with."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from statewright.core.durations import duration_words, relative_words


@pytest.mark.parametrize(("value", "words"), [
    (0, "0 s"), (0.44, "0.4 s"), (2.5, "2.5 s"), (45, "45 s"), (60, "1 min"),
    (65, "1 min 5 s"), (5400, "1 h 30 min"), (3612, "1 h"), (86400, "1 d"),
    (86400 + 3 * 3600 + 59, "1 d 3 h"), (timedelta(hours=36), "1 d 12 h"), (-90, "1 min 30 s"),
    (None, ""),
])
def test_duration_words(value: float | timedelta | None, words: str) -> None:
    assert duration_words(value) == words


def test_relative_words() -> None:
    now = datetime(2026, 1, 1, 12, tzinfo=UTC)
    assert relative_words(now, now - timedelta(seconds=5)) == "5 s ago"
    assert relative_words(now, now + timedelta(hours=1, minutes=30)) == "in 1 h 30 min"
    assert relative_words(now, None) == "never"
