"""A TriggerDagRunOperator's conf meets the input limits as a conf sent to the API does: one
nested deeper than STATEWRIGHT_MAX_INPUT_DEPTH fails the try naming the limit, and no run of
the target is created."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.noop import NoopOperator

from statewright.sdk import DAG
from statewright.sdk.operators import TriggerDagRunOperator


def deep(levels: int) -> Any:
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_a_conf_past_the_depth_limit_fails_the_try_and_triggers_nothing(
        assets_harness: Callable) -> None:
    with DAG("target", schedule=None) as target:
        NoopOperator(task_id="work")
    with DAG("controller", schedule=None) as controller:
        TriggerDagRunOperator(task_id="trigger", trigger_dag_id="target",
                              conf={"a": deep(100)})
    h = assets_harness()
    h.sync(target, controller)
    h.trigger("controller")
    h.loop()
    (ti,) = h.tis("controller")
    assert ti.state == "failed", ti.state_message
    assert "TriggerDagRunOperator's conf nests more than 64 levels" in ti.state_message
    assert "STATEWRIGHT_MAX_INPUT_DEPTH" in ti.state_message
    assert h.runs("target") == []
