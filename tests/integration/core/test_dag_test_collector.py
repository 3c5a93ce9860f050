"""dag.test() runs with the cyclic garbage collector set for a run of many quick tries: what
the process held before is frozen and collections come less often, cyclic garbage the tries
make is still collected, and the process's collector is as it was when the run ends."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from statewright.sdk import DAG, task
from statewright.services.dag_test import GEN0_THRESHOLD


class _Node:
    other: Any = None


@pytest.fixture
def collector() -> Iterator[None]:
    """The test's process as it found it, whatever a test did to its collector."""
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    gc.enable()
    yield
    gc.set_threshold(*threshold)
    gc.unfreeze()
    if not enabled:
        gc.disable()


def _seen_by_a_try() -> dict[str, Any]:
    @task
    def look() -> dict[str, Any]:
        a, b = _Node(), _Node()
        a.other, b.other = b, a  # a cycle: only the collector frees it
        gone = weakref.ref(a)
        del a, b
        # Enough objects kept for collections to run (a freed one takes back its count).
        kept = [[None] for _ in range(3 * GEN0_THRESHOLD)]
        del kept
        return {"threshold": gc.get_threshold()[0], "frozen": gc.get_freeze_count(),
                "cycle_collected": gone() is None}

    with DAG("collector_seen") as dag:
        look()
    result = dag.test()
    assert result.state == "success"
    value: dict[str, Any] = result.ti("look").return_value
    return value


def test_a_try_runs_with_the_start_frozen_and_fewer_collections(collector: None) -> None:
    before = gc.get_threshold()
    seen = _seen_by_a_try()
    assert seen["threshold"] == max(GEN0_THRESHOLD, before[0])
    assert seen["frozen"] > 0
    assert seen["cycle_collected"]
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_objects_keeps_them_and_its_thresholds(collector: None) -> None:
    gc.set_threshold(900, 11, 12)
    gc.freeze()
    seen = _seen_by_a_try()
    assert seen["threshold"] == 900
    assert gc.get_threshold() == (900, 11, 12)
    assert gc.get_freeze_count() > 0  # still frozen (freed ones leave the count)
