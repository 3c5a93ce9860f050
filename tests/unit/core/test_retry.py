"""Retry eligibility (Airflow 3's rule) and statewright's retry delay."""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime, timedelta

import pytest

from statewright.core.retry import (
    MAX_RETRY_DELAY,
    airflow_exponential_delay,
    is_eligible_to_retry,
    next_retry_at,
    retry_delay,
)

MINUTE = timedelta(minutes=1)

# -- eligibility -----------------------------------------------------------------------------

_ELIGIBILITY = [
    # (retries, try_number that failed, eligible)
    (0, 1, False),
    (0, 2, False),
    (1, 1, True),
    (1, 2, False),
    (2, 1, True),
    (2, 2, True),
    (2, 3, False),
    (3, 3, True),
    (3, 4, False),
    (5, 99, False),
]


@pytest.mark.parametrize(("retries", "try_number", "eligible"), _ELIGIBILITY)
def test_eligibility(retries: int, try_number: int, eligible: bool) -> None:
    assert is_eligible_to_retry(retries, try_number) is eligible


@pytest.mark.parametrize(
    ("retries", "try_number", "max_tries", "eligible"),
    [
        (2, 3, 5, True),  # cleared after try 3 failed: max_tries = 3 + 2
        (2, 5, 5, True),
        (2, 6, 5, False),
        (0, 2, 1, False),  # retries=0, cleared after try 1: max_tries = 1
        (2, 1, 0, False),  # max_tries 0 never retries
    ],
)
def test_eligibility_with_max_tries_raised_by_a_clear(
    retries: int, try_number: int, max_tries: int, eligible: bool
) -> None:
    assert is_eligible_to_retry(retries, try_number, max_tries=max_tries) is eligible


@pytest.mark.parametrize(("retries", "try_number"), [(0, 1), (0, 9), (3, 9)])
def test_restarting_task_may_always_retry(retries: int, try_number: int) -> None:
    assert is_eligible_to_retry(retries, try_number, restarting=True) is True


@pytest.mark.parametrize(("retries", "try_number"), [(-1, 1), (1, 0), (1, -3)])
def test_eligibility_rejects_impossible_numbers(retries: int, try_number: int) -> None:
    with pytest.raises(ValueError):
        is_eligible_to_retry(retries, try_number)


# -- delay -----------------------------------------------------------------------------------


@pytest.mark.parametrize("try_number", [1, 2, 5, 40])
def test_constant_delay_is_the_base(try_number: int) -> None:
    assert retry_delay(try_number, 5 * MINUTE) == 5 * MINUTE


def test_constant_delay_ignores_max_delay_as_airflow_does() -> None:
    assert retry_delay(3, 10 * MINUTE, max_delay=MINUTE) == 10 * MINUTE


@pytest.mark.parametrize(
    ("try_number", "expected"),
    [(1, 1), (2, 2), (3, 4), (4, 8), (5, 16), (6, 32), (10, 512)],
)
def test_exponential_sequence(try_number: int, expected: int) -> None:
    assert retry_delay(try_number, MINUTE, exponential=True) == expected * MINUTE


def test_exponential_keeps_sub_second_precision() -> None:
    assert retry_delay(3, timedelta(milliseconds=250), exponential=True) == timedelta(seconds=1)
    assert retry_delay(1, timedelta(microseconds=3), exponential=True) == timedelta(microseconds=3)


def test_exponential_capped_by_max_delay() -> None:
    delays = [retry_delay(n, MINUTE, exponential=True, max_delay=10 * MINUTE) for n in range(1, 8)]
    assert delays == [MINUTE, 2 * MINUTE, 4 * MINUTE, 8 * MINUTE, *([10 * MINUTE] * 3)]


@pytest.mark.parametrize("try_number", [12, 20, 100, 10_000])
def test_exponential_capped_at_24_hours_without_max_delay(try_number: int) -> None:
    assert retry_delay(try_number, MINUTE, exponential=True) == MAX_RETRY_DELAY
    assert MAX_RETRY_DELAY == timedelta(hours=24)


def test_max_delay_above_the_ceiling_does_not_lift_it() -> None:
    delay = retry_delay(30, MINUTE, exponential=True, max_delay=timedelta(days=3))
    assert delay == MAX_RETRY_DELAY


def test_zero_base_gives_zero_delay() -> None:
    assert retry_delay(7, timedelta(0), exponential=True) == timedelta(0)
    assert retry_delay(7, timedelta(0), exponential=True, jitter=1.0) == timedelta(0)


@pytest.mark.parametrize("jitter", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("exponential", [False, True])
def test_jitter_stays_within_bounds(jitter: float, exponential: bool) -> None:
    rng = random.Random(20240601)
    for try_number in range(1, 6):
        nominal = retry_delay(try_number, MINUTE, exponential=exponential)
        low = nominal * (1 - jitter)
        seen = {
            retry_delay(try_number, MINUTE, exponential=exponential, jitter=jitter, rng=rng)
            for _ in range(200)
        }
        assert all(low <= d <= nominal for d in seen), (try_number, min(seen), max(seen))
        assert len(seen) > 100  # actually spread


def test_jitter_is_reproducible_with_a_seeded_rng() -> None:
    def sequence() -> list[timedelta]:
        rng = random.Random(7)
        return [retry_delay(n, MINUTE, exponential=True, jitter=0.5, rng=rng) for n in range(1, 6)]

    assert sequence() == sequence()


def test_jitter_applies_before_the_cap() -> None:
    rng = random.Random(1)
    delays = {
        retry_delay(20, MINUTE, exponential=True, max_delay=10 * MINUTE, jitter=0.5, rng=rng)
        for _ in range(50)
    }
    assert delays == {10 * MINUTE}


def test_jitter_without_rng_uses_the_global_generator() -> None:
    delay = retry_delay(2, MINUTE, exponential=True, jitter=0.5)
    assert MINUTE <= delay <= 2 * MINUTE


@pytest.mark.parametrize("jitter", [-0.01, 1.01, float("nan"), float("inf")])
def test_jitter_outside_unit_interval_is_rejected(jitter: float) -> None:
    with pytest.raises(ValueError, match="jitter"):
        retry_delay(1, MINUTE, jitter=jitter)


def test_negative_base_is_rejected() -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        retry_delay(1, -MINUTE)


def test_negative_max_delay_is_rejected() -> None:
    with pytest.raises(ValueError, match="max retry delay"):
        retry_delay(1, MINUTE, exponential=True, max_delay=-MINUTE)


def test_try_number_below_one_is_rejected() -> None:
    with pytest.raises(ValueError, match="try_number"):
        retry_delay(0, MINUTE)


# -- next retry time -------------------------------------------------------------------------


def test_next_retry_at_adds_the_delay() -> None:
    end = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    assert next_retry_at(end, 5 * MINUTE) == datetime(2024, 5, 1, 12, 5, tzinfo=UTC)


def test_next_retry_at_needs_an_aware_datetime() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        next_retry_at(datetime(2024, 5, 1, 12, 0), MINUTE)


def test_next_retry_at_rejects_a_negative_delay() -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        next_retry_at(datetime(2024, 5, 1, tzinfo=UTC), -MINUTE)


# -- Airflow's hash-based delay --------------------------------------------------------------

LOGICAL = datetime(2024, 1, 1, tzinfo=UTC)


def _airflow_hash(dag_id: str, task_id: str, logical: object, try_number: int) -> int:
    key = f"{dag_id}#{task_id}#{logical}#{try_number}".encode()
    return int(hashlib.sha1(key, usedforsecurity=False).hexdigest(), 16)


@pytest.mark.parametrize("try_number", [1, 2, 3, 4])
def test_airflow_delay_matches_its_formula(try_number: int) -> None:
    min_backoff = 300 * 2 ** (try_number - 1)
    spread = _airflow_hash("etl", "load", "2024-01-01 00:00:00+00:00", try_number) % min_backoff
    delay = airflow_exponential_delay(
        try_number, timedelta(seconds=300), dag_id="etl", task_id="load", logical_date=LOGICAL
    )
    assert delay == timedelta(seconds=min_backoff + spread)
    assert timedelta(seconds=min_backoff) <= delay < timedelta(seconds=2 * min_backoff)


def test_airflow_delay_has_a_one_second_floor_and_whole_seconds() -> None:
    delay = airflow_exponential_delay(1, timedelta(0), dag_id="d", task_id="t", logical_date=None)
    assert delay == timedelta(seconds=1)  # min_backoff 1: hash % 1 == 0
    delay = airflow_exponential_delay(
        2, timedelta(milliseconds=300), dag_id="d", task_id="t", logical_date=LOGICAL
    )
    assert delay in (timedelta(seconds=1), timedelta(seconds=2))


def test_airflow_delay_caps() -> None:
    huge = airflow_exponential_delay(
        5000, timedelta(seconds=300), dag_id="d", task_id="t", logical_date=LOGICAL
    )
    assert huge == MAX_RETRY_DELAY
    capped = airflow_exponential_delay(
        9, timedelta(seconds=300), dag_id="d", task_id="t", logical_date=LOGICAL, max_delay=MINUTE
    )
    assert capped == MINUTE
    uncapped = airflow_exponential_delay(
        1, MINUTE, dag_id="d", task_id="t", logical_date=LOGICAL, max_delay=timedelta(0)
    )
    assert uncapped >= MINUTE  # a zero max_retry_delay is falsy in Airflow: no cap
