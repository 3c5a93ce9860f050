"""/api/v2 answers only Airflow's enum values, so the official client can read every run and
task instance: statewright's extra states map to the nearest of Airflow's."""

from __future__ import annotations

from typing import get_args

from statewright.api.v2 import adapt
from statewright.api.v2 import schemas as v2
from statewright.core.states import DagRunState, TaskInstanceState


def test_every_run_state_is_one_of_airflows() -> None:
    shown = {s.value: adapt.run_state(s.value) for s in DagRunState}
    assert set(shown.values()) <= set(get_args(v2.RunState))
    assert (shown["paused"], shown["cancelled"], shown["success"]) == (
        "running", "failed", "success")


def test_every_task_instance_state_is_one_of_airflows_or_null() -> None:
    shown = {s.value: adapt.ti_state(s.value) for s in TaskInstanceState}
    assert set(shown.values()) - {None} <= set(get_args(v2.TiState))
    assert [s for s, shown_as in shown.items() if shown_as is None] == ["none"]
    assert shown["shutdown"] == "restarting"  # Airflow 3 has no shutdown: being stopped
    assert all(shown[s] == s for s in get_args(v2.TiState) if s in shown)


def test_task_instance_ids_are_stable_uuids_per_key() -> None:
    one = adapt.ti_uuid("etl", "run1", "load", -1)
    assert one == adapt.ti_uuid("etl", "run1", "load", -1)
    assert len({one, adapt.ti_uuid("etl", "run1", "load", 0),
                adapt.ti_uuid("etl", "run2", "load", -1)}) == 3
