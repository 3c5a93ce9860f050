"""Clear and mark per map index: ``tasks clear --map-index``, ``tasks mark-failed --map-index``."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from statewright.core.states import TI
from statewright.db.tables import task_instance, xcom
from statewright.sdk import DAG, task
from statewright.services.controls import clear_task_instances, mark_task_instances
from statewright.services.controls.common import ControlError

CALLS: list[int] = []


def _dag() -> DAG:
    with DAG("mapped_controls") as dag:
        @task
        def square(x: int) -> int:
            CALLS.append(x)
            return x * x

        @task
        def total(values: Any) -> int:
            return sum(values)

        total(square.expand(x=[1, 2, 3]))
    return dag


def _rows(h: Any) -> dict[tuple[str, int], Any]:
    with h.engine.connect() as conn:
        return {(r.task_id, r.map_index): r for r in conn.execute(
            select(task_instance).where(task_instance.c.run_id == h.run_id)).all()}


def _values(h: Any) -> dict[tuple[str, int], Any]:
    with h.engine.connect() as conn:
        return {(r.task_id, r.map_index): r.value for r in conn.execute(
            select(xcom.c.task_id, xcom.c.map_index, xcom.c.value)).all()}


def test_clearing_one_map_index_runs_only_that_instance_again(harness: Any) -> None:
    CALLS.clear()
    h = harness(_dag())
    h.new_run()
    h.loop()
    assert sorted(CALLS) == [1, 2, 3] and h.run().state == "success"

    dry = clear_task_instances(h.engine, "r1", task_regexes=["^square$"], map_indexes=[1],
                               dry_run=True, now=h.clock())
    assert [c.label for c in dry.changes] == ["square[1]"]
    assert any("task square[1]: success -> restarting -> none" in line
               for line in dry.describe())
    clear_task_instances(h.engine, "r1", task_regexes=["^square$"], map_indexes=[1],
                         now=h.clock())
    assert ("square", 1) not in _values(h) and _values(h)[("square", 0)] == 1
    h.loop()
    rows = _rows(h)
    assert [rows[("square", i)].try_number for i in range(3)] == [1, 2, 1]
    assert sorted(CALLS) == [1, 2, 2, 3]
    assert h.run().state == "success" and _values(h)[("square", 1)] == 4


def test_an_unknown_map_index_is_refused_and_nothing_changes(harness: Any) -> None:
    h = harness(_dag())
    h.new_run()
    h.loop()
    with pytest.raises(ControlError, match="map index 7"):
        clear_task_instances(h.engine, "r1", task_regexes=["^square$"], map_indexes=[7],
                             now=h.clock())
    assert {r.state for r in _rows(h).values()} == {"success"}


def test_marking_one_map_index_failed_leaves_the_others(harness: Any) -> None:
    h = harness(_dag())
    h.new_run()
    h.loop()
    plan = mark_task_instances(h.engine, "r1", "square", TI.FAILED, map_indexes=[0],
                               now=h.clock())
    assert [c.label for c in plan.changes] == ["square[0]"]
    rows = _rows(h)
    assert [rows[("square", i)].state for i in range(3)] == ["failed", "success", "success"]
    assert h.run().state == "success"  # the leaf (total) succeeded


def test_results_are_cached_per_map_index(harness: Any) -> None:
    from datetime import timedelta

    from statewright.sdk.caching import task_input_hash

    CALLS.clear()
    with DAG("mapped_cache") as dag:
        @task(cache_key_fn=task_input_hash, cache_expiration=timedelta(hours=1))
        def cube(x: int) -> int:
            CALLS.append(x)
            return x ** 3

        cube.expand(x=[1, 2, 3])
    h = harness(dag)
    h.new_run("r1")
    h.loop()
    h.new_run("r2")
    h.loop()
    assert sorted(CALLS) == [1, 2, 3]  # the second run ran none: each index hit its own key
    rows = _rows(h)
    assert [rows[("cube", i)].state_name for i in range(3)] == ["Cached"] * 3
    with h.engine.connect() as conn:
        stored = {r.map_index: r.value for r in conn.execute(
            select(xcom.c.map_index, xcom.c.value).where(
                xcom.c.dag_run_id == rows[("cube", 0)].dag_run_id)).all()}
    assert stored == {0: 1, 1: 8, 2: 27}


SIZES: list[int] = []


def _resizing_dag() -> DAG:
    with DAG("mapped_resize") as dag:
        @task
        def items() -> list[int]:
            return list(range(SIZES.pop(0)))

        @task
        def double(x: int) -> int:
            return 2 * x

        @task
        def total(values: Any) -> int:
            return sum(values)

        total(double.expand(x=items()))
    return dag


@pytest.mark.parametrize(("first", "second", "states"), [
    (2, 4, ["success"] * 4),
    (4, 2, ["success", "success", "removed", "removed"]),
])
def test_a_cleared_mapped_task_is_counted_again(harness: Any, first: int, second: int,
                                                 states: list[str]) -> None:
    SIZES[:] = [first, second]
    h = harness(_resizing_dag())
    h.new_run()
    h.loop()
    assert h.run().state == "success"
    clear_task_instances(h.engine, "r1", now=h.clock())
    h.loop()
    rows = _rows(h)
    assert [rows[("double", i)].state for i in range(max(first, second))] == states
    assert h.run().state == "success"
    assert h.tis()["total"].state == "success"
    with h.engine.connect() as conn:
        [(value,)] = conn.execute(select(xcom.c.value).where(
            xcom.c.task_id == "total", xcom.c.dag_run_id == rows[("total", -1)].dag_run_id)).all()
    assert value == sum(2 * i for i in range(second))
