"""A task group's state in one run (the grid's group rows), as Airflow's grid aggregates it."""

from __future__ import annotations

import pytest

from statewright.core.states import TaskInstanceState as TI
from statewright.core.task_groups import GROUP_STATE_PRIORITY, summarize_group


def test_every_task_instance_state_has_a_rank() -> None:
    assert set(GROUP_STATE_PRIORITY) == set(TI)
    assert len(GROUP_STATE_PRIORITY) == len(TI)


@pytest.mark.parametrize(("states", "shown"), [
    (["success", "failed", "running"], TI.FAILED),
    (["success", "upstream_failed", "up_for_retry"], TI.UPSTREAM_FAILED),
    (["success", "running", "none"], TI.RUNNING),
    (["success", "queued", "running"], TI.QUEUED),
    (["success", "none"], TI.NONE),  # part done, part not started: not finished
    (["success", "skipped"], TI.SUCCESS),
    (["skipped", "skipped"], TI.SKIPPED),
    (["removed", "skipped"], TI.SKIPPED),
])
def test_the_most_telling_state_shows(states: list[str], shown: TI) -> None:
    summary = summarize_group(states)
    assert summary is not None and summary.state is shown


def test_counts_and_an_empty_group() -> None:
    summary = summarize_group([TI.SUCCESS, "success", "failed"])
    assert summary is not None and summary.counts == {"failed": 1, "success": 2}
    assert summarize_group([]) is None


def test_an_unknown_state_is_refused() -> None:
    with pytest.raises(ValueError, match="bogus"):
        summarize_group(["bogus"])
