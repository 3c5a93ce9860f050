"""A flow's parameters as params: each one's default and JSON Schema from its type hint."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from statewright.core.params import merge_params
from statewright.flows import flow


class Window(BaseModel):
    start: str
    days: int = 1


@flow
def report(region: Literal["eu", "us"], window: Window, days: int = 7, *extra: int,
           note: str | None = None, **more: str) -> None:
    """Report."""


def test_each_named_parameter_has_its_default_and_schema() -> None:
    spec = report.parameter_spec
    assert list(spec) == ["region", "window", "days", "note"]  # not *extra / **more
    assert spec["days"] == {"value": 7, "has_default": True,
                            "schema": {"type": "integer"}, "description": None}
    assert spec["region"]["has_default"] is False
    assert spec["region"]["schema"]["enum"] == ["eu", "us"]
    assert spec["note"]["value"] is None and spec["note"]["has_default"] is True


def test_a_runs_parameters_are_checked_against_the_signature() -> None:
    spec = report.parameter_spec
    _, problems = merge_params(spec, {"region": "mars", "window": {"start": "x"},
                                      "days": "seven"})
    assert sorted(p.param for p in problems) == ["days", "region"]
    _, missing = merge_params(spec, {"region": "eu", "window": {"days": 2}})
    assert [p.param for p in missing] == ["window"]  # its model needs 'start'
    _, fine = merge_params(spec, {"region": "eu", "window": {"start": "2026-01-01"}})
    assert fine == []
