"""The pure choice of which scheduled task instances to queue."""

from __future__ import annotations

from typing import Any

from statewright.services.scheduler.capacity import Candidate, select_to_queue


def c(i: int, *, dag: str = "d", task: str | None = None, run: int = 1, pool: str = "p",
      slots: int = 1) -> Candidate:
    return Candidate(i, dag, task or f"t{i}", run, pool, slots)


def choose(cands: list[Candidate], **kw: Any) -> Any:
    opts: dict[str, Any] = {
        "executor_slots": 100, "pool_open": {"p": 10}, "pool_total": {"p": 10},
        "run_active": {}, "run_limit": lambda dag: 16, "task_active": {},
        "task_limit": lambda dag, task: None}
    opts.update(kw)
    return select_to_queue(cands, **opts)


def test_executor_slots_and_pool_slots() -> None:
    assert choose([c(i) for i in range(5)], executor_slots=2).chosen == [0, 1]
    sel = choose([c(0, slots=3), c(1, slots=2), c(2)], pool_open={"p": 4})
    assert sel.chosen == [0, 2]  # 1 needs 2 slots, only 1 left: a lower priority one fits
    assert ("d", "t1") in sel.full_tasks


def test_a_full_pool_a_missing_pool_and_an_oversized_task() -> None:
    sel = choose([c(0, pool="full"), c(1, pool="missing"), c(2, slots=11), c(3)],
                 pool_open={"p": 10, "full": 0}, pool_total={"p": 10, "full": 3})
    assert sel.chosen == [3]
    assert sel.full_pools == {"full", "missing"} and sel.full_tasks == {("d", "t2")}


def test_max_active_tasks_per_run_and_per_task_limits() -> None:
    cands = [c(0, run=1), c(1, run=1), c(2, run=1), c(3, run=2)]
    sel = choose(cands, run_active={1: 1}, run_limit=lambda dag: 2)
    assert sel.chosen == [0, 3] and sel.full_runs == {1}
    same = [c(0, task="x", run=1), c(1, task="x", run=2), c(2, task="y", run=3)]
    sel = choose(same, task_limit=lambda dag, task: 1 if task == "x" else None)
    assert sel.chosen == [0, 2] and sel.full_tasks == {("d", "x")}
