"""Trigger-rule timing as in Airflow: a task is decided as soon as the upstream outcomes seen so
far settle it, so the order in which its upstreams finish can change its outcome."""

from __future__ import annotations

import pytest

from statewright.core.scheduling import plan_dependencies
from statewright.core.states import TI, TaskInstanceState
from statewright.core.trigger_rules import TriggerRule, reached_by_short_circuit

ORDER = ["a", "b", "join"]
UPSTREAM = {"join": ["a", "b"]}


def _finish_in_order(rule: TriggerRule, outcomes: list[tuple[str, TaskInstanceState]]
                     ) -> list[TaskInstanceState | None]:
    """Finish the upstreams one by one; after each, run the scheduler's pass over the run.

    Returns what ``join`` was after each pass (None: not decided yet)."""
    states: dict[str, TaskInstanceState] = {"a": TI.RUNNING, "b": TI.RUNNING, "join": TI.NONE}
    seen: list[TaskInstanceState | None] = []
    for task_id, outcome in outcomes:
        states[task_id] = outcome
        planned = plan_dependencies(ORDER, UPSTREAM, {"a": rule, "b": rule, "join": rule},
                                    states)
        states.update(planned)
        seen.append(states["join"] if states["join"] is not TI.NONE else None)
    return seen


def test_all_success_skip_seen_first_skips_at_once_and_a_later_failure_changes_nothing() -> None:
    seen = _finish_in_order(TriggerRule.ALL_SUCCESS, [("a", TI.SKIPPED), ("b", TI.FAILED)])
    assert seen == [TI.SKIPPED, TI.SKIPPED]  # decided while b was still running


def test_all_success_failure_seen_first_is_upstream_failed() -> None:
    seen = _finish_in_order(TriggerRule.ALL_SUCCESS, [("b", TI.FAILED), ("a", TI.SKIPPED)])
    assert seen == [TI.UPSTREAM_FAILED, TI.UPSTREAM_FAILED]


@pytest.mark.parametrize(("rule", "first", "second", "after_first", "after_second"), [
    # none_failed_min_one_success: a failure decides at once; a skip waits for the others
    (TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS, ("a", TI.SKIPPED), ("b", TI.FAILED),
     None, TI.UPSTREAM_FAILED),
    (TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS, ("b", TI.FAILED), ("a", TI.SKIPPED),
     TI.UPSTREAM_FAILED, TI.UPSTREAM_FAILED),
    # all_skipped: a success seen first skips; a skip seen first waits
    (TriggerRule.ALL_SKIPPED, ("a", TI.SUCCESS), ("b", TI.SKIPPED), TI.SKIPPED, TI.SKIPPED),
    (TriggerRule.ALL_SKIPPED, ("b", TI.SKIPPED), ("a", TI.SKIPPED), None, TI.SCHEDULED),
    # none_skipped: the first skip decides
    (TriggerRule.NONE_SKIPPED, ("a", TI.SUCCESS), ("b", TI.SKIPPED), None, TI.SKIPPED),
    # all_done_min_one_success: a skip seen first skips, although the other one succeeds
    (TriggerRule.ALL_DONE_MIN_ONE_SUCCESS, ("a", TI.SKIPPED), ("b", TI.SUCCESS),
     TI.SKIPPED, TI.SKIPPED),
    # one_success runs on the first success, without waiting for the rest
    (TriggerRule.ONE_SUCCESS, ("a", TI.SUCCESS), ("b", TI.FAILED), TI.SCHEDULED, TI.SCHEDULED),
    (TriggerRule.ONE_FAILED, ("b", TI.FAILED), ("a", TI.SUCCESS), TI.SCHEDULED, TI.SCHEDULED),
])
def test_a_decision_comes_with_the_first_outcome_that_settles_it(
    rule: TriggerRule, first: tuple[str, TaskInstanceState], second: tuple[str, TaskInstanceState],
    after_first: TaskInstanceState | None, after_second: TaskInstanceState,
) -> None:
    assert _finish_in_order(rule, [first, second]) == [after_first, after_second]


def test_the_decision_travels_down_a_chain_in_one_pass() -> None:
    order = ["a", "b", "join", "after"]
    upstream = {"join": ["a", "b"], "after": ["join"]}
    rules = dict.fromkeys(order, TriggerRule.ALL_SUCCESS)
    states = {"a": TI.SKIPPED, "b": TI.RUNNING, "join": TI.NONE, "after": TI.NONE}
    assert plan_dependencies(order, upstream, rules, states) == {
        "join": TI.SKIPPED, "after": TI.SKIPPED}


@pytest.mark.parametrize(("rule", "is_teardown", "reached"), [
    (TriggerRule.ALL_SUCCESS, False, True),
    (TriggerRule.ALL_DONE, False, True),
    (TriggerRule.NONE_FAILED, False, True),
    (TriggerRule.ALWAYS, False, False),
    ("always", False, False),
    (TriggerRule.ALL_DONE_SETUP_SUCCESS, True, False),
])
def test_what_a_short_circuit_skip_reaches(rule: TriggerRule | str, is_teardown: bool,
                                           reached: bool) -> None:
    assert reached_by_short_circuit(rule, is_teardown=is_teardown) is reached
