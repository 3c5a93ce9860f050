"""``AssetAccessControl``: Airflow 3.3's team rules of an asset (``Asset(access_control=...)``).

In Airflow they act only in multi-team mode (``[core] multi_team = True``, teams given by DAG
bundles): ``producer_teams`` names the teams whose DAGs' events on the asset reach consumers of
other teams, ``allow_global`` whether events of DAGs without a team do, ``consumer_teams``
(``None``: no filter) which teams' DAGs may consume it. statewright has no teams, as Airflow
with multi-team mode off: a DAG file may declare the rules (they are checked as Airflow checks
them, and kept on the asset), and every event reaches every consumer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from statewright.core.asset_conditions import AssetDefinitionError

__all__ = ["AssetAccessControl", "check_access_control"]


def _teams(value: Any, what: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise AssetDefinitionError(f"AssetAccessControl: {what} must be a list of team names, "
                                   f"got {value!r}.")
    for entry in value:
        if not isinstance(entry, str) or not entry or entry.isspace():
            raise AssetDefinitionError(
                f"AssetAccessControl: each entry in {what} must be a non-empty string, "
                f"got {entry!r}.")
    return list(value)


class AssetAccessControl:
    """Which teams may produce events on an asset and consume them (multi-team mode only)."""

    def __init__(self, producer_teams: Sequence[str] | None = None,
                 consumer_teams: Sequence[str] | None = None, allow_global: bool = True) -> None:
        self.producer_teams: list[str] = _teams(producer_teams, "producer_teams") or []
        self.consumer_teams = _teams(consumer_teams, "consumer_teams")
        if not isinstance(allow_global, bool):
            raise AssetDefinitionError(
                f"AssetAccessControl: allow_global must be True or False, got {allow_global!r}.")
        self.allow_global = allow_global

    def _key(self) -> tuple[Any, ...]:
        return (self.producer_teams, self.consumer_teams, self.allow_global)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AssetAccessControl):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((tuple(self.producer_teams), self.allow_global))

    def __repr__(self) -> str:
        return (f"AssetAccessControl(producer_teams={self.producer_teams!r}, "
                f"consumer_teams={self.consumer_teams!r}, allow_global={self.allow_global!r})")


def check_access_control(value: Any, where: str) -> AssetAccessControl:
    """An asset's ``access_control=`` (Airflow's default when None: any team, global too)."""
    if value is None:
        return AssetAccessControl()
    if not isinstance(value, AssetAccessControl):
        raise AssetDefinitionError(f"{where}: access_control must be an AssetAccessControl, "
                                   f"got {type(value).__name__}.")
    return value
