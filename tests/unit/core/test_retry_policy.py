"""The retry-policy decision (``core.retry.decide_failure``) and Airflow 3.3's policy classes
(``sdk.retry_policy``): which exceptions match, what each action makes of a failed try."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest

from statewright.core.retry import (
    POLICY_DEFAULT,
    POLICY_FAIL,
    POLICY_RETRY,
    FailureVerdict,
    PolicyDecision,
    decide_failure,
    decision_from_report,
)
from statewright.sdk.retry_policy import (
    ExceptionRetryPolicy,
    RetryAction,
    RetryDecision,
    RetryPolicy,
    RetryRule,
    policy_report,
)

BASE = timedelta(minutes=1)


def _decide(decision: PolicyDecision | None, try_number: int, retries: int = 2,
            **kw: Any) -> FailureVerdict:
    return decide_failure(decision, retries=retries, try_number=try_number, base=BASE, **kw)


def test_without_a_decision_the_usual_rule_applies() -> None:
    assert _decide(None, 1) == FailureVerdict(retry=True, delay=BASE)
    assert _decide(None, 2, exponential=True) == FailureVerdict(retry=True, delay=2 * BASE)
    assert _decide(None, 3) == FailureVerdict(retry=False)
    assert _decide(PolicyDecision(POLICY_DEFAULT), 1) == FailureVerdict(retry=True, delay=BASE)


def test_fail_ends_the_task_whatever_retries_are_left() -> None:
    verdict = _decide(PolicyDecision(POLICY_FAIL, reason="auth"), 1, retries=5)
    assert verdict == FailureVerdict(retry=False, reason="auth")


def test_retry_uses_its_delay_exactly_and_never_adds_retries() -> None:
    own = PolicyDecision(POLICY_RETRY, delay=timedelta(seconds=30), reason="rate limit")
    assert _decide(own, 2, exponential=True, max_delay=timedelta(seconds=5)) == \
        FailureVerdict(retry=True, delay=timedelta(seconds=30), reason="rate limit")
    assert _decide(own, 3) == FailureVerdict(retry=False, reason="rate limit")
    assert _decide(own, 1, retries=0) == FailureVerdict(retry=False, reason="rate limit")
    # a retry without a delay of its own waits the task's usual delay (backoff included)
    assert _decide(PolicyDecision(POLICY_RETRY), 2, exponential=True) == \
        FailureVerdict(retry=True, delay=2 * BASE)
    # a clear raises max_tries: the policy's retry follows it, as the usual rule does
    assert _decide(own, 4, max_tries=5).retry


def test_a_reason_is_kept_to_500_characters() -> None:
    assert _decide(PolicyDecision(POLICY_FAIL, reason="x" * 600), 1).reason == "x" * 500


@pytest.mark.parametrize("report, expected", [
    ({"action": "retry", "delay_seconds": 30.0, "reason": "r"},
     PolicyDecision(POLICY_RETRY, timedelta(seconds=30), "r")),
    ({"action": "fail", "delay_seconds": None, "reason": None}, PolicyDecision(POLICY_FAIL)),
    ({"action": "maybe"}, None),
    ({"action": "retry", "delay_seconds": -1}, None),
    ({"action": "retry", "delay_seconds": "soon"}, None),
    (None, None),
    ("retry", None),
])
def test_a_reported_decision_is_read_or_ignored(report: Any,
                                                expected: PolicyDecision | None) -> None:
    assert decision_from_report(report) == expected


class HTTPError(Exception):
    pass


class RateLimited(HTTPError):
    pass


def test_rules_match_in_order_by_class_path_or_list() -> None:
    policy = ExceptionRetryPolicy(rules=[
        RetryRule(exception=f"{__name__}.RateLimited", retry_delay=timedelta(minutes=5),
                  reason="Rate limit, backing off"),
        RetryRule(exception=[KeyError, "builtins.PermissionError"], action=RetryAction.FAIL),
        RetryRule(exception=HTTPError, action=RetryAction.FAIL, match_subclasses=False),
    ])
    assert policy.evaluate(RateLimited(), 1, 3) == RetryDecision(
        RetryAction.RETRY, timedelta(minutes=5), "Rate limit, backing off")
    assert policy.evaluate(PermissionError(), 1, 3) == RetryDecision(
        RetryAction.FAIL, None, "Matched rule for PermissionError")
    assert policy.evaluate(HTTPError(), 1, 3).action is RetryAction.FAIL
    assert policy.evaluate(ValueError(), 1, 3) == RetryDecision(RetryAction.DEFAULT)
    assert ExceptionRetryPolicy([], default=RetryAction.FAIL).evaluate(
        ValueError(), 1, 3).action is RetryAction.FAIL


def test_subclasses_match_unless_told_otherwise() -> None:
    # requests' ConnectionError is an OSError, not the builtin ConnectionError
    assert RetryRule(exception=OSError).matches(ConnectionResetError())
    assert not RetryRule(exception=ConnectionError).matches(OSError())
    assert not RetryRule(exception=HTTPError, match_subclasses=False).matches(RateLimited())


def test_a_path_that_cannot_be_imported_never_matches(caplog: pytest.LogCaptureFixture) -> None:
    rule = RetryRule(exception="no_such_module_here.HTTPError")
    with caplog.at_level(logging.WARNING):
        assert not rule.matches(Exception())
    assert "no_such_module_here.HTTPError" in caplog.text
    with pytest.raises(ValueError, match="dotted import path"):
        RetryRule(exception="HTTPError")
    with pytest.raises(TypeError):
        RetryRule(exception=42)  # type: ignore[arg-type]


def test_a_policy_round_trips_through_its_serialized_form() -> None:
    policy = ExceptionRetryPolicy(rules=[
        RetryRule(exception=[KeyError, "requests.exceptions.HTTPError"],
                  retry_delay=timedelta(seconds=30), reason="r"),
        RetryRule(exception=ValueError, action=RetryAction.FAIL, match_subclasses=False),
    ], default=RetryAction.FAIL)
    data = policy.serialize()
    assert data["rules"][0] == {"exception": ["builtins.KeyError", "requests.exceptions.HTTPError"],
                                "action": "retry", "match_subclasses": True,
                                "retry_delay": 30.0, "reason": "r"}
    assert ExceptionRetryPolicy.deserialize(data).serialize() == data


class _Task:
    def __init__(self, policy: Any) -> None:
        self.retry_policy = policy


class _TI:
    try_number = 2
    max_tries = 4


def test_the_report_a_try_sends_its_worker() -> None:
    policy = ExceptionRetryPolicy(rules=[RetryRule(exception=KeyError,
                                                   retry_delay=timedelta(seconds=3))])
    assert policy_report(_Task(policy), KeyError("k"), {"ti": _TI()}) == {
        "action": "retry", "delay_seconds": 3.0, "reason": "Matched rule for KeyError"}
    assert policy_report(_Task(None), KeyError("k"), {"ti": _TI()}) is None

    class Raises(RetryPolicy):
        def evaluate(self, exception: BaseException, try_number: int, max_tries: int,
                     context: Any = None) -> RetryDecision:
            raise RuntimeError("bug")

    assert policy_report(_Task(Raises()), KeyError("k"), {"ti": _TI()}) is None
