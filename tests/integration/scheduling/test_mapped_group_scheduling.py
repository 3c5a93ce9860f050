"""Mapped task groups in the scheduler, on a manual clock with an executor that holds what it is
given: depth-first execution (instance i of a task in the group runs once instance i of its
upstream in the group is done, whatever the other instances are doing)."""

from __future__ import annotations

from typing import Any

from statewright.sdk import DAG, task, task_group


def _dag() -> DAG:
    with DAG("mg_sched", schedule=None) as dag:
        @task
        def first(x: int) -> int:
            return x

        @task
        def second(x: int) -> int:
            return x

        @task_group
        def group(x: int) -> Any:
            return second(first(x))

        group.expand(x=[1, 2, 3])
    return dag


def _tis(h: Any) -> dict[tuple[str, int], Any]:
    return {(t.task_id, t.map_index): t for t in h.tis("mg_sched")}


def _finish(h: Any, *keys: tuple[str, int]) -> None:
    tis = _tis(h)
    ids = [tis[k].id for k in keys]
    h.executor.held = [i for i in h.executor.held if i not in ids]
    h.executor._finish(ids)


def _started(harness: Any) -> Any:
    """A harness with one run of the DAG triggered and scheduled; what is queued is held."""
    from statewright.core.transitions import Actor
    from statewright.db.engine import transaction
    from statewright.services.dag_runs import trigger_dag

    h = harness()
    h.sync(_dag())
    h.executor.hold = True
    with transaction(h.engine) as conn:
        trigger_dag(conn, "mg_sched", now=h.clock(), actor=Actor.USER, run_id="a")
    h.loop()
    return h


def test_an_instance_runs_when_its_own_upstream_instance_is_done(harness: Any) -> None:
    h = _started(harness)
    states = {k: t.state for k, t in _tis(h).items()}
    assert states == {("group.first", 0): "queued", ("group.first", 1): "queued",
                      ("group.first", 2): "queued", ("group.second", -1): "none"}
    _finish(h, ("group.first", 1))
    h.loop()
    states = {k: t.state for k, t in _tis(h).items()}
    assert states[("group.second", -1)] == "none"  # waits for instance 0 to expand
    _finish(h, ("group.first", 0))
    h.loop()
    states = {k: t.state for k, t in _tis(h).items()}
    assert states[("group.second", 0)] == "queued"
    assert states[("group.second", 1)] == "queued"  # its upstream instance 1 was done first
    assert states[("group.second", 2)] == "none"  # first[2] still runs
    assert states[("group.first", 2)] == "queued"
    h.executor.finish()
    h.loop()
    h.executor.finish()
    h.loop()
    assert [r.state for r in h.runs("mg_sched")] == ["success"]
    assert sorted(m for (t, m) in _tis(h) if t == "group.second") == [0, 1, 2]


def test_a_failed_upstream_instance_fails_only_the_same_index(harness: Any) -> None:
    h = _started(harness)
    from statewright.core.states import TI
    from statewright.core.transitions import Actor
    from statewright.db import transition as door
    from statewright.db.engine import transaction

    tis = _tis(h)
    with transaction(h.engine) as conn:  # instance 0 fails: decided at expansion time
        door.set_task_instance_state(conn, tis[("group.first", 0)].id, frm=TI.QUEUED,
                                     to=TI.FAILED, actor=Actor.WORKER, now=h.clock())
    h.executor.held.remove(tis[("group.first", 0)].id)
    h.loop()
    states = {k: t.state for k, t in _tis(h).items()}
    assert states[("group.second", 0)] == "upstream_failed"
    assert states[("group.second", 1)] == "none"
    h.executor.finish()
    h.loop()
    h.executor.finish()
    h.loop()
    states = {k: t.state for k, t in _tis(h).items()}
    assert states[("group.second", 1)] == "success"
    assert states[("group.second", 2)] == "success"
    assert [r.state for r in h.runs("mg_sched")] == ["failed"]


def test_a_cleared_instance_runs_again_with_its_own_downstream_instance(harness: Any) -> None:
    from statewright.services.controls.clear import clear_task_instances

    h = _started(harness)
    h.executor.hold = False
    for _ in range(3):
        h.executor.finish()
        h.loop()
    assert [r.state for r in h.runs("mg_sched")] == ["success"]
    clear_task_instances(h.engine, "a", dag_id="mg_sched", task_regexes=[r"^group\.first$"],
                         downstream=True, map_indexes=[1], now=h.clock())
    h.loop()
    tis = _tis(h)
    assert {k: (t.state, t.try_number) for k, t in tis.items() if k[1] == 1} == {
        ("group.first", 1): ("success", 2), ("group.second", 1): ("success", 2)}
    assert {t.try_number for k, t in tis.items() if k[1] != 1} == {1}
    assert [r.state for r in h.runs("mg_sched")] == ["success"]
