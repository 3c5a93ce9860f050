"""``max_active_tis_per_dagrun``: the instances of one mapped task running at once in one run."""

from __future__ import annotations

from statewright.services.scheduler.capacity import Candidate, select_to_queue


def test_max_active_tis_per_dagrun_limits_one_task_in_each_run() -> None:
    cands = [Candidate(i, "d", "mapped", 1 if i < 4 else 2, "p", 1) for i in range(6)]
    cands.append(Candidate(9, "d", "other", 1, "p", 1))
    active = {(1, "mapped"): 1}
    sel = select_to_queue(
        cands, executor_slots=100, pool_open={"p": 10}, pool_total={"p": 10}, run_active={},
        run_limit=lambda dag: 16, task_active={}, task_limit=lambda dag, task: None,
        run_task_active=active,
        run_task_limit=lambda dag, task: 2 if task == "mapped" else None)
    # Run 1 had one running: one more; run 2 none: two; the other task is not limited.
    assert sel.chosen == [0, 4, 5, 9]
    assert active == {(1, "mapped"): 2, (2, "mapped"): 2}
