"""AssetAccessControl (Airflow 3.3): declared on an asset in a DAG file, checked as Airflow
checks it; without teams here it changes no event's way (Airflow with multi-team mode off)."""

from __future__ import annotations

import pytest

from statewright.sdk import Asset, AssetAccessControl


def test_default_and_declared() -> None:
    plain = Asset("s3://bucket/a")
    assert plain.access_control == AssetAccessControl()
    assert (plain.access_control.producer_teams, plain.access_control.consumer_teams,
            plain.access_control.allow_global) == ([], None, True)
    rules = AssetAccessControl(producer_teams=["team_analytics"], allow_global=False)
    shared = Asset(name="shared_data", uri="s3://data-lake/shared/output.csv",
                   access_control=rules)
    assert shared.access_control is rules
    assert shared.access_control.producer_teams == ["team_analytics"]
    assert not shared.access_control.allow_global
    assert shared == Asset(name="shared_data", uri="s3://data-lake/shared/output.csv")


@pytest.mark.parametrize("kwargs", [
    {"producer_teams": [""]},
    {"producer_teams": ["  "]},
    {"consumer_teams": [3]},
    {"producer_teams": "team"},
    {"allow_global": "no"},
])
def test_checked_as_airflow_checks_it(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="AssetAccessControl"):
        AssetAccessControl(**kwargs)  # type: ignore[arg-type]


def test_access_control_must_be_the_class() -> None:
    with pytest.raises(ValueError, match="access_control must be an AssetAccessControl"):
        Asset("s3://bucket/a", access_control={"producer_teams": ["x"]})
