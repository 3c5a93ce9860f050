"""Trigger rules against Airflow 3's TriggerRuleDep (scheduler mode, flag_upstream_failed=True).

The exhaustive tables compare :func:`evaluate_trigger_rule` with ``_expected``, a restatement of
Airflow's rules written over the list of upstream outcomes (not over counts), rule by rule.
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.core.states import TaskInstanceState
from statewright.core.trigger_rules import (
    DEFAULT_TRIGGER_RULE,
    DepDecision,
    TriggerRule,
    UpstreamSummary,
    evaluate_trigger_rule,
    parse_trigger_rule,
)

TI = TaskInstanceState
TR = TriggerRule
RUN, WAIT, SKIP, UF = (
    DepDecision.RUN,
    DepDecision.WAIT,
    DepDecision.SKIP,
    DepDecision.UPSTREAM_FAILED,
)

# Upstream outcomes: the five finished states plus two unfinished ones (they must behave alike).
S, K, F, U, R = TI.SUCCESS, TI.SKIPPED, TI.FAILED, TI.UPSTREAM_FAILED, TI.REMOVED
OUTCOMES = (S, K, F, U, R, TI.RUNNING, TI.NONE)
FINISHED = {S, K, F, U, R}


def _expected(rule: TriggerRule, outcomes: list[TaskInstanceState]) -> DepDecision:
    """Airflow's documented rules, restated over the upstream outcomes."""
    if not outcomes or rule is TR.ALWAYS:
        return RUN
    c = Counter(outcomes)

    def has(*states: TaskInstanceState) -> bool:
        return any(c[s] for s in states)

    def every(*states: TaskInstanceState) -> bool:
        return all(o in states for o in outcomes)

    all_finished = every(*FINISHED)
    if rule is TR.ALL_SUCCESS:
        if has(F, U):
            return UF
        if has(K):
            return SKIP
        return RUN if every(S) else WAIT
    if rule is TR.ALL_FAILED:
        if has(S, K):
            return SKIP
        return RUN if every(F, U) else WAIT
    if rule is TR.ALL_DONE:
        return RUN if all_finished else WAIT
    if rule is TR.ALL_DONE_MIN_ONE_SUCCESS:
        if has(K):
            return SKIP
        if all_finished:
            return RUN if has(S) else UF
        return WAIT
    if rule is TR.ALL_SKIPPED:
        if has(S, F, U):
            return SKIP
        return RUN if every(K) else WAIT
    if rule is TR.ONE_SUCCESS:
        if has(S):
            return RUN
        if all_finished:
            return SKIP if every(K) else UF
        return WAIT
    if rule is TR.ONE_FAILED:
        if has(F, U):
            return RUN
        return SKIP if all_finished else WAIT
    if rule is TR.ONE_DONE:
        if has(S, F):
            return RUN
        return SKIP if all_finished else WAIT
    if rule is TR.NONE_FAILED:
        if has(F, U):
            return UF
        return RUN if every(S, K) else WAIT
    if rule is TR.NONE_FAILED_MIN_ONE_SUCCESS:
        if has(F, U):
            return UF
        if every(K):
            return SKIP
        return RUN if every(S, K) else WAIT
    if rule is TR.NONE_SKIPPED:
        if has(K):
            return SKIP
        return RUN if all_finished else WAIT
    if rule is TR.ALL_DONE_SETUP_SUCCESS:
        # No upstream here is a setup task: the rule is all_done (the setup cases are below).
        return RUN if all_finished else WAIT
    raise AssertionError(f"no restatement for {rule}")


def _decide(rule: TriggerRule, *states: TaskInstanceState) -> DepDecision:
    return evaluate_trigger_rule(rule, UpstreamSummary.from_states(states))


# -- the enum and parsing --------------------------------------------------------------------


def test_trigger_rules_are_airflow_3_rules() -> None:
    assert {r.value for r in TriggerRule} == {
        "all_done_setup_success",
        "all_success",
        "all_failed",
        "all_done",
        "all_done_min_one_success",
        "all_skipped",
        "one_success",
        "one_failed",
        "one_done",
        "none_failed",
        "none_failed_min_one_success",
        "none_skipped",
        "always",
    }
    assert DEFAULT_TRIGGER_RULE is TR.ALL_SUCCESS


@pytest.mark.parametrize("rule", list(TriggerRule))
def test_parse_accepts_member_and_string(rule: TriggerRule) -> None:
    assert parse_trigger_rule(rule) is rule
    assert parse_trigger_rule(rule.value) is rule


@pytest.mark.parametrize(
    "bad",
    ["ALL_SUCCESS", "all-success", " all_success", "", "sometimes", None, 3, ["all_success"]],
)
def test_parse_rejects_anything_else(bad: object) -> None:
    with pytest.raises(DagDefinitionError) as info:
        parse_trigger_rule(bad)
    message = str(info.value)
    assert repr(bad) in message
    for rule in TriggerRule:
        assert rule.value in message


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("none_failed_or_skipped", "none_failed_min_one_success"),
        ("dummy", "use always"),
    ],
)
def test_parse_explains_airflow_names_statewright_does_not_take(name: str, hint: str) -> None:
    with pytest.raises(DagDefinitionError, match=hint):
        parse_trigger_rule(name)


# -- the summary -----------------------------------------------------------------------------


def test_summary_from_states_counts_finished_and_total() -> None:
    summary = UpstreamSummary.from_states([S, S, K, F, U, R, TI.RUNNING, TI.NONE, TI.QUEUED])
    assert summary == UpstreamSummary(
        success=2, skipped=1, failed=1, upstream_failed=1, removed=1, total=9
    )
    assert summary.done == 6  # removed counts as done
    assert not summary.all_done


def test_summary_from_no_states_is_empty() -> None:
    summary = UpstreamSummary.from_states([])
    assert summary.total == 0
    assert summary.done == 0
    assert summary.all_done


@pytest.mark.parametrize(
    "kwargs",
    [
        {"success": -1, "total": 1},
        {"total": -1},
        {"success": 2, "total": 1},
        {"removed": 1, "skipped": 1, "total": 1},
    ],
)
def test_summary_rejects_impossible_counts(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="UpstreamSummary"):
        UpstreamSummary(**kwargs)


# -- the exhaustive tables -------------------------------------------------------------------

_TWO_UPSTREAMS = [
    pytest.param(rule, list(pair), id=f"{rule.value}-{pair[0].value}-{pair[1].value}")
    for rule in TriggerRule
    for pair in itertools.product(OUTCOMES, repeat=2)
]


@pytest.mark.parametrize(("rule", "outcomes"), _TWO_UPSTREAMS)
def test_every_rule_against_every_pair_of_upstream_outcomes(
    rule: TriggerRule, outcomes: list[TaskInstanceState]
) -> None:
    assert _decide(rule, *outcomes) is _expected(rule, outcomes)


@pytest.mark.parametrize("rule", list(TriggerRule))
def test_every_rule_against_one_and_three_upstreams(rule: TriggerRule) -> None:
    for size in (1, 3):
        for outcomes in itertools.product(OUTCOMES, repeat=size):
            got = _decide(rule, *outcomes)
            assert got is _expected(rule, list(outcomes)), (rule, outcomes, got)


@pytest.mark.parametrize("rule", list(TriggerRule))
def test_no_upstream_runs(rule: TriggerRule) -> None:
    assert _decide(rule) is RUN


@pytest.mark.parametrize("rule", list(TriggerRule))
def test_unfinished_states_are_alike(rule: TriggerRule) -> None:
    unfinished = [s for s in TaskInstanceState if s not in FINISHED]
    for other in OUTCOMES:
        decisions = {_decide(rule, other, state) for state in unfinished}
        assert len(decisions) == 1, (rule, other, decisions)


def test_string_rule_is_accepted() -> None:
    assert evaluate_trigger_rule("one_success", UpstreamSummary(success=1, total=3)) is RUN  # type: ignore[arg-type]


# -- named scenarios (Airflow's documented behaviour) ----------------------------------------

_SCENARIOS = [
    # (name, rule, upstream states, decision)
    ("branch join after one branch skipped", TR.NONE_FAILED_MIN_ONE_SUCCESS, [S, K], RUN),
    ("branch join before its branch ends", TR.NONE_FAILED_MIN_ONE_SUCCESS, [TI.RUNNING, K], WAIT),
    ("branch join when every branch skipped", TR.NONE_FAILED_MIN_ONE_SUCCESS, [K, K], SKIP),
    ("branch join with a failed branch", TR.NONE_FAILED_MIN_ONE_SUCCESS, [F, K], UF),
    ("default rule, all upstream succeeded", TR.ALL_SUCCESS, [S, S], RUN),
    ("default rule, a skipped upstream skips", TR.ALL_SUCCESS, [S, K], SKIP),
    ("default rule, a failure propagates at once", TR.ALL_SUCCESS, [F, TI.RUNNING], UF),
    ("default rule, upstream_failed propagates", TR.ALL_SUCCESS, [U, S], UF),
    ("default rule, failure beats skip", TR.ALL_SUCCESS, [K, F], UF),
    ("default rule, waits for running upstream", TR.ALL_SUCCESS, [S, TI.RUNNING], WAIT),
    ("default rule, a removed upstream blocks for ever", TR.ALL_SUCCESS, [S, R], WAIT),
    ("one_failed when all upstream succeeded", TR.ONE_FAILED, [S, S], SKIP),
    ("one_failed fires on the first failure", TR.ONE_FAILED, [F, TI.RUNNING], RUN),
    ("one_failed fires on upstream_failed", TR.ONE_FAILED, [U, S], RUN),
    ("all_failed with a success", TR.ALL_FAILED, [F, S], SKIP),
    ("all_failed with a skip", TR.ALL_FAILED, [F, K], SKIP),
    ("all_failed when all failed", TR.ALL_FAILED, [F, U], RUN),
    ("one_success when all are skipped", TR.ONE_SUCCESS, [K, K], SKIP),
    ("one_success when none succeeded", TR.ONE_SUCCESS, [F, K], UF),
    ("one_success fires on the first success", TR.ONE_SUCCESS, [S, TI.RUNNING], RUN),
    ("one_success waits while none succeeded", TR.ONE_SUCCESS, [F, TI.RUNNING], WAIT),
    ("all_skipped with an unfinished upstream", TR.ALL_SKIPPED, [K, TI.RUNNING], WAIT),
    ("all_skipped when all skipped", TR.ALL_SKIPPED, [K, K], RUN),
    ("all_skipped with a success", TR.ALL_SKIPPED, [K, S], SKIP),
    ("all_done runs after failures", TR.ALL_DONE, [F, U], RUN),
    ("all_done waits for the last upstream", TR.ALL_DONE, [F, TI.UP_FOR_RETRY], WAIT),
    ("all_done counts removed as done", TR.ALL_DONE, [R, K], RUN),
    ("one_done fires on a failure", TR.ONE_DONE, [F, TI.RUNNING], RUN),
    ("one_done ignores upstream_failed", TR.ONE_DONE, [U, TI.RUNNING], WAIT),
    ("one_done when all skipped", TR.ONE_DONE, [K, U], SKIP),
    ("none_failed runs with skips", TR.NONE_FAILED, [K, K], RUN),
    ("none_failed with a failure", TR.NONE_FAILED, [F, S], UF),
    ("none_skipped runs after a failure", TR.NONE_SKIPPED, [F, S], RUN),
    ("none_skipped with a skip", TR.NONE_SKIPPED, [K, TI.RUNNING], SKIP),
    ("min_one_success with success and failure", TR.ALL_DONE_MIN_ONE_SUCCESS, [S, F], RUN),
    ("min_one_success without success", TR.ALL_DONE_MIN_ONE_SUCCESS, [F, U], UF),
    ("min_one_success skips on any skip", TR.ALL_DONE_MIN_ONE_SUCCESS, [K, TI.RUNNING], SKIP),
    ("always runs while upstream runs", TR.ALWAYS, [TI.RUNNING, F], RUN),
]


@pytest.mark.parametrize(
    ("rule", "states", "decision"),
    [pytest.param(rule, states, decision, id=name) for name, rule, states, decision in _SCENARIOS],
)
def test_scenario(
    rule: TriggerRule, states: list[TaskInstanceState], decision: DepDecision
) -> None:
    assert _decide(rule, *states) is decision
