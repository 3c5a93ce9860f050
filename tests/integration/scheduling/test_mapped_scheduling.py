"""The scheduler with mapped tasks, on a manual clock with an executor that holds what it is
given: expansion at the moment the dependencies are met, ``max_active_tis_per_dagrun`` per run,
and the run's state over every instance."""

from __future__ import annotations

from typing import Any

from tests.noop import NoopOperator

from statewright.sdk import DAG, task


def _dag(limit: int | None) -> DAG:
    with DAG("mapped_sched", schedule=None) as dag:
        @task(max_active_tis_per_dagrun=limit)
        def work(x: int) -> int:
            return x

        NoopOperator(task_id="start") >> work.expand(x=[1, 2, 3, 4, 5])
    return dag


def _states(h: Any, run_id: str) -> dict[tuple[str, int], str]:
    return {(t.task_id, t.map_index): t.state for t in h.tis("mapped_sched")
            if t.run_id == run_id}


def test_max_active_tis_per_dagrun_queues_that_many_instances_of_a_run_at_once(
        harness: Any) -> None:
    from statewright.core.transitions import Actor
    from statewright.db.engine import transaction
    from statewright.services.dag_runs import trigger_dag

    h = harness()
    h.sync(_dag(2))
    h.executor.hold = True
    with transaction(h.engine) as conn:
        trigger_dag(conn, "mapped_sched", now=h.clock(), actor=Actor.USER, run_id="a")
        trigger_dag(conn, "mapped_sched", now=h.clock(), actor=Actor.USER, run_id="b")
    h.loop()
    assert _states(h, "a")[("work", -1)] == "none"  # waits for start: not expanded yet
    h.executor.finish()
    h.loop()
    for run_id in ("a", "b"):
        states = _states(h, run_id)
        assert sorted(m for (t, m) in states if t == "work") == [0, 1, 2, 3, 4]
        assert sorted(s for (t, _), s in states.items() if t == "work") == [
            "queued", "queued", "scheduled", "scheduled", "scheduled"]
    rounds = 0
    while h.executor.held:
        h.executor.finish()
        h.loop()
        rounds += 1
        for run_id in ("a", "b"):
            assert sum(s == "queued" for s in _states(h, run_id).values()) <= 2
    assert rounds == 3  # 2 + 2 + 1 instances per run
    assert [r.state for r in h.runs("mapped_sched")] == ["success", "success"]


def test_without_a_limit_every_instance_is_queued_in_the_loop_that_expands(
        harness: Any) -> None:
    from statewright.core.transitions import Actor
    from statewright.db.engine import transaction
    from statewright.services.dag_runs import trigger_dag

    h = harness()
    h.sync(_dag(None))
    h.executor.hold = True
    with transaction(h.engine) as conn:
        trigger_dag(conn, "mapped_sched", now=h.clock(), actor=Actor.USER, run_id="a")
    h.loop()
    h.executor.finish()
    h.loop()
    assert sorted(s for (t, _), s in _states(h, "a").items() if t == "work") == ["queued"] * 5
