"""Retries: may a failed try be retried, and when.

Eligibility mirrors Airflow 3 exactly (``TaskInstance.is_eligible_to_retry`` in
``airflow/models/taskinstance.py`` and ``_is_eligible_to_retry`` in the execution API's task
instance routes). The try number is the number of the try that just failed, counted from 1;
``max_tries`` starts equal to the task's ``retries`` (a clear raises it to
``try_number + retries``).

The delay is where statewright deliberately differs. Airflow's
``TaskInstance.next_retry_datetime``:

- without exponential backoff, the delay is ``retry_delay``, unchanged (``max_retry_delay`` is
  ignored);
- with it, in whole seconds::

      min_backoff = max(1, ceil(retry_delay_seconds * 2 ** (try_number - 1)))
      ti_hash     = int(sha1(f"{dag_id}#{task_id}#{logical_date}#{try_number}").hexdigest(), 16)
      delay       = min(min_backoff + ti_hash % min_backoff, MAX_RETRY_DELAY)  # 24 h by default
      delay       = min(max_retry_delay, delay) if max_retry_delay else delay

  so the delay lies in ``[min_backoff, 2 * min_backoff)``: a deterministic spread *above* the
  exponential value (up to twice it), rounded up to a second, never below one second. Recent
  Airflow versions accept a float multiplier in place of the 2.

statewright's :func:`retry_delay`:

- without exponential backoff, the delay is ``base`` (``max_delay`` ignored, as in Airflow);
- with it, ``base * 2 ** (try_number - 1)`` exactly (try 1 failed -> base, try 2 -> 2 x base, ...),
  no rounding to seconds and no one-second floor;
- ``jitter`` (0 by default, so no spread) multiplies the delay by a uniform random factor in
  ``[1 - jitter, 1]``: the spread is *below* the nominal delay, never above it, and random rather
  than a hash of the task instance, so it spreads retries of different runs of one task too;
- then, for exponential backoff only, the delay is capped at ``max_delay`` and at the 24-hour
  ceiling (:data:`MAX_RETRY_DELAY`; like Airflow, a ``max_delay`` above the ceiling does not lift
  it). Jitter applies before the cap, so delays that reach the cap are not spread. The result is
  never negative.

:func:`airflow_exponential_delay` computes Airflow's hash-based delay, for comparing with runs
recorded from Airflow.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

MAX_RETRY_DELAY = timedelta(hours=24)
"""Ceiling of an exponential backoff delay (Airflow's ``[core] max_task_retry_delay`` default)."""

# Beyond 64 doublings any non-zero base exceeds the ceiling; the clamp keeps the arithmetic finite.
_MAX_DOUBLINGS = 64
_ONE_MICROSECOND = timedelta(microseconds=1)


def is_eligible_to_retry(
    retries: int,
    try_number: int,
    *,
    max_tries: int | None = None,
    restarting: bool = False,
) -> bool:
    """Whether the try ``try_number`` that just failed may be retried.

    Mirrors Airflow 3's ``_is_eligible_to_retry(state, try_number, max_tries)``: a task instance
    cleared while running (``restarting``) may always retry; otherwise
    ``max_tries != 0 and try_number <= max_tries``, where ``max_tries`` defaults to ``retries``.
    So with ``retries=2`` tries 1 and 2 may retry and try 3 fails for good.
    """
    if retries < 0:
        raise ValueError(f"retries must be 0 or more, got {retries}.")
    if try_number < 1:
        raise ValueError(f"try_number counts tries from 1, got {try_number}.")
    if restarting:
        return True
    limit = retries if max_tries is None else max_tries
    return limit != 0 and try_number <= limit


def retry_delay(
    try_number: int,
    base: timedelta,
    *,
    exponential: bool = False,
    max_delay: timedelta | None = None,
    jitter: float = 0.0,
    rng: random.Random | None = None,
) -> timedelta:
    """How long to wait after the failed try ``try_number`` before the next try.

    See the module docstring for the formula and how it differs from Airflow's. ``rng`` supplies
    the jitter factor (the module's global generator when omitted); pass a seeded
    ``random.Random`` for reproducible delays.
    """
    _validate_delay_args(try_number, base, max_delay, jitter)
    base_us = base // _ONE_MICROSECOND
    if exponential:
        nominal_us = base_us * 2 ** min(try_number - 1, _MAX_DOUBLINGS)
    else:
        nominal_us = base_us
    delay_us: float = nominal_us if jitter == 0.0 else nominal_us * _jitter_factor(jitter, rng)
    if exponential:
        delay_us = min(delay_us, _exponential_cap(max_delay) // _ONE_MICROSECOND)
    return timedelta(microseconds=round(max(delay_us, 0)))


def _validate_delay_args(
    try_number: int, base: timedelta, max_delay: timedelta | None, jitter: float
) -> None:
    if try_number < 1:
        raise ValueError(f"try_number counts tries from 1, got {try_number}.")
    if base < timedelta(0):
        raise ValueError(f"retry delay must not be negative, got {base}.")
    if max_delay is not None and max_delay < timedelta(0):
        raise ValueError(f"max retry delay must not be negative, got {max_delay}.")
    if not 0.0 <= jitter <= 1.0:  # also rejects NaN
        raise ValueError(f"jitter must be between 0 and 1 (a fraction of the delay), got {jitter}.")


def _jitter_factor(jitter: float, rng: random.Random | None) -> float:
    uniform = rng.uniform if rng is not None else random.uniform
    return uniform(1.0 - jitter, 1.0)


def _exponential_cap(max_delay: timedelta | None) -> timedelta:
    if max_delay is None:
        return MAX_RETRY_DELAY
    return min(max_delay, MAX_RETRY_DELAY)


def next_retry_at(end_date: datetime, delay: timedelta) -> datetime:
    """When the next try may start: the failed try's end plus the delay (Airflow's
    ``next_retry_datetime`` returns ``end_date + delay``)."""
    if end_date.tzinfo is None or end_date.utcoffset() is None:
        raise ValueError(f"end_date must be timezone-aware (UTC), got {end_date.isoformat()}.")
    if delay < timedelta(0):
        raise ValueError(f"retry delay must not be negative, got {delay}.")
    return end_date + delay


def airflow_exponential_delay(
    try_number: int,
    base: timedelta,
    *,
    dag_id: str,
    task_id: str,
    logical_date: datetime | None,
    max_delay: timedelta | None = None,
    multiplier: float = 2.0,
) -> timedelta:
    """Airflow's exponential backoff delay, bit for bit (``TaskInstance.next_retry_datetime``).

    ``logical_date`` is rendered with ``str()`` as Airflow's f-string does (``None`` for a run
    without a logical date). A falsy ``max_delay`` (None or zero) means no cap, as in Airflow.
    """
    if try_number < 1:
        raise ValueError(f"try_number counts tries from 1, got {try_number}.")
    ceiling = int(MAX_RETRY_DELAY.total_seconds())
    try:
        min_backoff = math.ceil(base.total_seconds() * (multiplier ** (try_number - 1)))
    except OverflowError:
        min_backoff = ceiling
    min_backoff = max(min_backoff, 1)
    key = f"{dag_id}#{task_id}#{logical_date}#{try_number}".encode()
    ti_hash = int(hashlib.sha1(key, usedforsecurity=False).hexdigest(), 16)
    delay = timedelta(seconds=min(min_backoff + ti_hash % min_backoff, ceiling))
    if max_delay:
        delay = min(max_delay, delay)
    return delay


# --- Retry policies (Airflow 3.3's ``retry_policy=``) --------------------------------------------
#
# A task's retry policy looks at the exception in the task's process and reports a decision;
# the worker then decides here, with the task's retries, what the failed try becomes. As in
# Airflow 3.3: ``fail`` ends the task instance failed at once, whatever retries are left;
# ``retry`` retries only while the task's retries allow it (a policy can stop retries early, never
# add any), after its own delay when it gives one (exactly that delay: no backoff, no cap) and
# else after the task's usual delay; ``default`` (or no decision, or a policy that failed) is the
# usual rule.

POLICY_RETRY = "retry"
POLICY_FAIL = "fail"
POLICY_DEFAULT = "default"
POLICY_ACTIONS = frozenset({POLICY_RETRY, POLICY_FAIL, POLICY_DEFAULT})
MAX_REASON_CHARS = 500
"""A policy's reason is kept to 500 characters (Airflow's ``retry_reason`` column)."""


@dataclass(frozen=True)
class PolicyDecision:
    """What a task's retry policy said about one failure (plain data, sent by the task)."""

    action: str = POLICY_DEFAULT
    delay: timedelta | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.action not in POLICY_ACTIONS:
            raise ValueError(f"retry policy action must be one of {sorted(POLICY_ACTIONS)}, "
                             f"got {self.action!r}.")
        if self.delay is not None and self.delay < timedelta(0):
            raise ValueError(f"retry policy delay must not be negative, got {self.delay}.")


@dataclass(frozen=True)
class FailureVerdict:
    """What a failed try becomes: retried after ``delay``, or failed for good."""

    retry: bool
    delay: timedelta | None = None
    reason: str | None = None
    """The policy's reason (for the state's message), ``None`` without one."""


def decide_failure(
    decision: PolicyDecision | None,
    *,
    retries: int,
    try_number: int,
    max_tries: int | None = None,
    base: timedelta,
    exponential: bool = False,
    max_delay: timedelta | None = None,
    rng: random.Random | None = None,
) -> FailureVerdict:
    """Retry or fail the try ``try_number`` that just failed, given its policy's decision.

    ``decision`` is ``None`` for a task without a retry policy (or whose policy raised): the usual
    rule (:func:`is_eligible_to_retry`, :func:`retry_delay`) decides alone.
    """
    reason = decision.reason[:MAX_REASON_CHARS] if decision and decision.reason else None
    if decision is not None and decision.action == POLICY_FAIL:
        return FailureVerdict(retry=False, reason=reason)
    if not is_eligible_to_retry(retries, try_number, max_tries=max_tries):
        return FailureVerdict(retry=False, reason=reason)
    if decision is not None and decision.action == POLICY_RETRY and decision.delay is not None:
        return FailureVerdict(retry=True, delay=decision.delay, reason=reason)
    delay = retry_delay(try_number, base, exponential=exponential, max_delay=max_delay, rng=rng)
    return FailureVerdict(retry=True, delay=delay, reason=reason)


def decision_from_report(report: object) -> PolicyDecision | None:
    """The decision a task's process reported (``{"action", "delay_seconds", "reason"}``), or
    ``None`` when there is none or it is not one (a malformed report falls back to the usual
    rule, as a policy that raised does in Airflow)."""
    if not isinstance(report, dict):
        return None
    seconds = report.get("delay_seconds")
    reason = report.get("reason")
    try:
        delay = None if seconds is None else timedelta(seconds=float(seconds))
        return PolicyDecision(action=str(report.get("action", POLICY_DEFAULT)), delay=delay,
                              reason=None if reason is None else str(reason))
    except (TypeError, ValueError, OverflowError):
        return None
