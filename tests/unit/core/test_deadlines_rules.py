"""The pure deadline rules: reference → time, what is refused, when a deadline is missed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from statewright.core import deadlines as rules
from statewright.core.errors import DagDefinitionError

NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)
CB = {"kind": "sync", "path": "m.f", "kwargs": {}}


def alert(ref: dict[str, object], seconds: float) -> rules.Alert:
    return rules.parse_alerts([{"reference": ref, "interval": seconds, "callback": CB}])[0]


def test_each_reference_gives_its_time() -> None:
    queued = alert({"reference_type": rules.QUEUED_AT}, 3600)
    assert rules.deadline_time(queued, queued_at=NOW, logical_date=None, now=NOW) == \
        NOW + timedelta(hours=1)
    logical = alert({"reference_type": rules.LOGICAL_DATE}, 60)
    assert rules.deadline_time(logical, queued_at=NOW, logical_date=None, now=NOW) is None
    assert rules.deadline_time(logical, queued_at=NOW, logical_date=NOW, now=NOW) == \
        NOW + timedelta(minutes=1)
    fixed = alert({"reference_type": rules.FIXED_DATETIME, "datetime": NOW.timestamp()}, -600)
    assert rules.deadline_time(fixed, queued_at=None, logical_date=None, now=NOW) == \
        NOW - timedelta(minutes=10)
    avg = alert({"reference_type": rules.AVERAGE_RUNTIME, "max_runs": 3, "min_runs": 2}, 60)
    assert rules.average_runtime([100.0], avg) is None  # fewer than min_runs
    assert rules.average_runtime([100.0, 200.0, 300.0, 9999.0], avg) == 200.0  # newest 3
    assert rules.deadline_time(avg, queued_at=None, logical_date=None, now=NOW,
                               average_seconds=200.0) == NOW + timedelta(seconds=260)
    assert rules.deadline_time(avg, queued_at=None, logical_date=None, now=NOW) is None


@pytest.mark.parametrize(("ref", "seconds", "match"), [
    ({"reference_type": "DagRunStartedAt"}, 60, "does not exist"),
    ({"reference_type": rules.QUEUED_AT}, -1, "is negative"),
    ({"reference_type": rules.LOGICAL_DATE}, -60, "is negative"),
    ({"reference_type": rules.AVERAGE_RUNTIME, "max_runs": 2, "min_runs": 3}, 60, "min_runs"),
    ({"reference_type": rules.AVERAGE_RUNTIME, "max_runs": 0}, 60, "at least 1"),
])
def test_bad_alerts_are_refused(ref: dict[str, object], seconds: float, match: str) -> None:
    with pytest.raises(DagDefinitionError, match=match):
        alert(ref, seconds)


def test_a_callback_must_be_sync_or_async() -> None:
    with pytest.raises(DagDefinitionError, match="AsyncCallback or SyncCallback"):
        rules.parse_alerts([{"reference": {"reference_type": rules.QUEUED_AT}, "interval": 1,
                             "callback": {"kind": "email", "path": "m.f"}}])


def test_missed_only_when_the_run_had_not_ended_by_the_deadline() -> None:
    due = NOW
    assert rules.is_missed(due, now=NOW, run_ended_at=None)
    assert not rules.is_missed(due, now=NOW - timedelta(seconds=1), run_ended_at=None)
    assert not rules.is_missed(due, now=NOW + timedelta(hours=1), run_ended_at=due)
    assert rules.is_missed(due, now=NOW + timedelta(hours=1),
                           run_ended_at=due + timedelta(seconds=1))
