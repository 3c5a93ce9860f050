"""The pure rules of task state: retention, encoding limits, visibility, the try fence."""

from __future__ import annotations

import pytest

from statewright.core.task_state import (
    NEVER_EXPIRE,
    Retention,
    TaskStateError,
    encode_value,
    refusal,
    retention_of,
    validate_key,
    visible,
)


def test_retention_defaults_to_the_run_and_refuses_unknown_names() -> None:
    assert retention_of(None) is Retention.RUN
    assert retention_of("TRY") is Retention.TRY
    assert retention_of(NEVER_EXPIRE) is Retention.NEVER_EXPIRE
    with pytest.raises(TaskStateError, match="forever"):
        retention_of("forever")


def test_values_are_json_within_the_limit_and_errors_name_the_key() -> None:
    assert encode_value("k", {"a": [1, 2.5, None]}) == '{"a":[1,2.5,null]}'
    with pytest.raises(TaskStateError, match=r"'k'.*not JSON"):
        encode_value("k", object())
    with pytest.raises(TaskStateError, match=r"'k'.*not JSON"):
        encode_value("k", float("nan"))
    with pytest.raises(TaskStateError, match=r"'big'.*12 bytes"):
        encode_value("big", "x" * 10, limit=11)
    with pytest.raises(TaskStateError):
        validate_key("")


def test_try_values_are_seen_only_by_their_try() -> None:
    assert visible("try", 1, 1) and not visible("try", 1, 2)
    assert visible("run", 1, 2) and visible("never_expire", 1, 3)
    assert visible("try", 1, None)


def test_only_the_running_try_may_write() -> None:
    assert refusal(2, 2, "running") is None
    assert "stale" in (refusal(1, 2, "running") or "")
    assert "no longer running" in (refusal(2, 2, "success") or "")
    assert "no longer exists" in (refusal(1, None, None) or "")
