"""Param formats as a standard Airflow install checks them, whatever optional packages are
installed here: "time" is HH:MM:SS (Airflow's example_params_ui_tutorial uses '12:13:14')."""

from __future__ import annotations

import pytest

from statewright.core.params import param_problem

TIME = {"type": "string", "format": "time"}


@pytest.mark.parametrize("value", ["12:13:14", "00:00:00", "23:59:59"])
def test_a_time_of_day(value: str) -> None:
    assert param_problem(value, TIME) is None


@pytest.mark.parametrize("value", ["12:13", "25:00:00", "noon"])
def test_not_a_time_of_day(value: str) -> None:
    assert param_problem(value, TIME) == f"{value!r} is not a 'time'"


def test_other_formats_still_checked() -> None:
    assert param_problem("2025-13-01", {"type": "string", "format": "date"}) is not None
    assert param_problem(5, TIME) == "5 is not of type 'string'"
