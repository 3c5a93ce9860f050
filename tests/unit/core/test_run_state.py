"""DAG run outcome and fail_fast targets, against Airflow 3's DagRun.update_state and
_stop_remaining_tasks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statewright.core.run_state import (
    SCHEDULABLE_STATES,
    TaskView,
    decide_run_state,
    fail_stop_targets,
    keeps_running,
)
from statewright.core.states import TI_TERMINAL, TI_UNFINISHED, DagRunState, TaskInstanceState

TI = TaskInstanceState
FAILED, SUCCESS = DagRunState.FAILED, DagRunState.SUCCESS


def _tis(**states: TaskInstanceState) -> list[TaskView]:
    return [TaskView(task_id, state) for task_id, state in states.items()]


# -- decide_run_state ------------------------------------------------------------------------

# Short names for the table below.
OK, FAIL, SKIP, UF, RM = TI.SUCCESS, TI.FAILED, TI.SKIPPED, TI.UPSTREAM_FAILED, TI.REMOVED
RUNNING, NONE, RETRY, DEFER = TI.RUNNING, TI.NONE, TI.UP_FOR_RETRY, TI.DEFERRED

_RUN_CASES = [
    # (name, task states, leaves, any_schedulable, expected)
    ("leaf failed", {"a": OK, "b": FAIL}, {"b"}, True, FAILED),
    ("leaf upstream_failed", {"a": FAIL, "b": UF}, {"b"}, True, FAILED),
    ("all leaves success", {"a": OK, "b": OK, "c": OK}, {"b", "c"}, True, SUCCESS),
    ("leaves success and skipped", {"a": OK, "b": SKIP, "c": OK}, {"b", "c"}, True, SUCCESS),
    ("all leaves skipped", {"a": SKIP, "b": SKIP}, {"b"}, True, SUCCESS),
    ("failed non-leaf, all_done leaf ok", {"a": FAIL, "cleanup": OK}, {"cleanup"}, True, SUCCESS),
    ("failed non-leaf, skipped leaf", {"a": FAIL, "b": SKIP}, {"b"}, True, SUCCESS),
    ("one of two leaves failed", {"a": OK, "b": OK, "c": FAIL}, {"b", "c"}, True, FAILED),
    ("failed leaf waits for the other", {"a": FAIL, "b": RUNNING}, {"a", "b"}, True, None),
    ("leaf done, non-leaf running", {"a": RUNNING, "b": OK}, {"b"}, True, None),
    ("leaf up for retry", {"a": OK, "b": RETRY}, {"b"}, True, None),
    ("leaf deferred", {"a": OK, "b": DEFER}, {"b"}, True, None),
    ("removed leaf ignored, other ok", {"a": OK, "b": RM}, {"a", "b"}, True, SUCCESS),
    ("removed leaf ignored, other failed", {"a": FAIL, "b": RM}, {"a", "b"}, True, FAILED),
    ("every leaf removed, non-leaf failed", {"a": FAIL, "b": RM}, {"b"}, True, SUCCESS),
    ("removed non-leaf", {"a": RM, "b": OK}, {"b"}, True, SUCCESS),
    ("no task instances", {}, set(), True, SUCCESS),
    ("deadlock: nothing can run", {"a": OK, "b": NONE}, {"b"}, False, FAILED),
    ("deadlock: removed upstream", {"a": RM, "b": NONE, "c": NONE}, {"c"}, False, FAILED),
    ("no deadlock while one can run", {"a": OK, "b": NONE}, {"b"}, True, None),
    ("deferred task is never a deadlock", {"a": DEFER, "b": NONE}, {"b"}, False, None),
    ("finished run ignores deadlock flag", {"a": OK}, {"a"}, False, SUCCESS),
]


@pytest.mark.parametrize(
    ("states", "leaves", "any_schedulable", "expected"),
    [pytest.param(s, leaves, flag, exp, id=name) for name, s, leaves, flag, exp in _RUN_CASES],
)
def test_decide_run_state(
    states: dict[str, TaskInstanceState],
    leaves: set[str],
    any_schedulable: bool,
    expected: DagRunState | None,
) -> None:
    assert decide_run_state(_tis(**states), leaves, any_schedulable=any_schedulable) is expected


@pytest.mark.parametrize("unfinished", sorted(TI_UNFINISHED))
@pytest.mark.parametrize("leaf", [TI.SUCCESS, TI.FAILED])
def test_any_unfinished_task_keeps_the_run_going(
    unfinished: TaskInstanceState, leaf: TaskInstanceState
) -> None:
    tis = _tis(a=unfinished, b=leaf)
    assert decide_run_state(tis, {"b"}) is None
    assert decide_run_state(tis, {"a", "b"}) is None


@pytest.mark.parametrize("leaf", sorted(TI_TERMINAL))
def test_single_finished_leaf(leaf: TaskInstanceState) -> None:
    expected = {
        TI.SUCCESS: SUCCESS,
        TI.SKIPPED: SUCCESS,
        TI.REMOVED: SUCCESS,  # no leaf left to look at
        TI.FAILED: FAILED,
        TI.UPSTREAM_FAILED: FAILED,
    }[leaf]
    assert decide_run_state(_tis(a=TI.SUCCESS, b=leaf), {"b"}) is expected


def test_schedulable_states_are_airflows() -> None:
    assert SCHEDULABLE_STATES == {TI.NONE, TI.UP_FOR_RETRY, TI.UP_FOR_RESCHEDULE}


# -- fail_stop_targets -----------------------------------------------------------------------


def test_fail_stop_fails_running_and_skips_the_rest() -> None:
    tis = _tis(
        failed=TI.FAILED,
        done=TI.SUCCESS,
        running=TI.RUNNING,
        waiting=TI.NONE,
        scheduled=TI.SCHEDULED,
        queued=TI.QUEUED,
        deferred=TI.DEFERRED,
        retry=TI.UP_FOR_RETRY,
        reschedule=TI.UP_FOR_RESCHEDULE,
        restarting=TI.RESTARTING,
        shutdown=TI.SHUTDOWN,
        skipped=TI.SKIPPED,
        upstream_failed=TI.UPSTREAM_FAILED,
        removed=TI.REMOVED,
    )
    to_fail, to_skip = fail_stop_targets(tis)
    assert to_fail == ["running"]
    assert to_skip == [
        "waiting",
        "scheduled",
        "queued",
        "deferred",
        "retry",
        "reschedule",
        "restarting",
        "shutdown",
    ]


def test_fail_stop_can_overwrite_terminal_states_as_airflow_does() -> None:
    tis = _tis(
        failed=TI.FAILED,
        other_failed=TI.FAILED,
        done=TI.SUCCESS,
        waiting=TI.NONE,
        skipped=TI.SKIPPED,
        upstream_failed=TI.UPSTREAM_FAILED,
        removed=TI.REMOVED,
    )
    assert fail_stop_targets(tis, overwrite_terminal=True) == (
        [],
        ["waiting", "upstream_failed", "removed"],
    )


def test_fail_stop_excludes_the_failing_task_whatever_its_state() -> None:
    tis = _tis(culprit=TI.RUNNING, other=TI.RUNNING, later=TI.NONE)
    assert fail_stop_targets(tis, failed_task_id="culprit") == (["other"], ["later"])


def test_fail_stop_with_nothing_left() -> None:
    assert fail_stop_targets(_tis(a=TI.FAILED, b=TI.SUCCESS)) == ([], [])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list(TI)), min_size=1, max_size=8),
       st.booleans(), st.data())
def test_keeps_running_answers_as_decide_run_state(states: list[TaskInstanceState],
                                                   any_schedulable: bool, data: Any) -> None:
    """The scheduler asks ``keeps_running`` before building a view of every task instance:
    it must be True exactly when ``decide_run_state`` keeps the run running, whatever the
    leaves."""
    tis = [TaskView(f"t{i}", s) for i, s in enumerate(states)]
    leaves = data.draw(st.sets(st.sampled_from([t.task_id for t in tis])))
    decided = decide_run_state(tis, leaves, any_schedulable=any_schedulable)
    assert keeps_running(states, any_schedulable) is (decided is None)
