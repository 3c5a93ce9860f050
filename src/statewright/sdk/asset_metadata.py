"""``Metadata``: what a task function yields to attach extra to an asset event (Airflow's).

A task whose callable is a generator function is run to its end by the runtime; each
``Metadata`` it yields updates ``outlet_events[asset].extra`` (and, with ``alias``, resolves
that alias to the asset with the same extra). Anything else it yields is logged and ignored.
The task's return value is the generator's own (``return value`` inside it; None without one).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Generator, Mapping
from typing import Any

from statewright.core.asset_conditions import AssetDefinitionError
from statewright.sdk.assets import Asset, AssetAlias, _check_extra

__all__ = ["Metadata", "collect_metadata", "yields_metadata"]

log = logging.getLogger("statewright.task")


class Metadata:
    """Extra for the event of ``asset`` (an outlet of the task), optionally through ``alias``."""

    __slots__ = ("alias", "asset", "extra")

    def __init__(self, asset: Asset, extra: Mapping[str, Any] | None = None,
                 alias: AssetAlias | None = None) -> None:
        if not isinstance(asset, Asset):
            raise AssetDefinitionError(
                f"Metadata: asset must be an Asset, got {type(asset).__name__}.")
        if alias is not None and not isinstance(alias, AssetAlias):
            raise AssetDefinitionError(
                f"Metadata: alias must be an AssetAlias or None, got {type(alias).__name__}.")
        self.asset = asset
        self.extra: dict[str, Any] = _check_extra(extra, f"Metadata for {asset!r}")
        self.alias = alias

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Metadata):
            return NotImplemented
        return (self.asset, self.extra, self.alias) == (other.asset, other.extra, other.alias)

    __hash__ = None  # type: ignore[assignment]  # mutable, as Airflow's

    def __repr__(self) -> str:
        alias = f", alias={self.alias!r}" if self.alias is not None else ""
        return f"Metadata(asset={self.asset!r}, extra={self.extra!r}{alias})"


def yields_metadata(task: Any, value: Any) -> bool:
    """Whether ``value`` is the generator a task's generator-function callable returned."""
    function = getattr(task, "python_callable", None)
    return (inspect.isgenerator(value) and function is not None
            and inspect.isgeneratorfunction(inspect.unwrap(function)))


def collect_metadata(generator: Generator[Any, Any, Any], outlet_events: Any) -> Any:
    """Run ``generator`` to its end, applying each yielded ``Metadata`` to ``outlet_events``;
    returns the generator's return value."""
    while True:
        try:
            item = next(generator)
        except StopIteration as stop:
            return stop.value
        if isinstance(item, Metadata):
            outlet_events[item.asset].extra.update(item.extra)
            if item.alias is not None:
                outlet_events[item.alias].add(item.asset, extra=item.extra)
        else:
            log.warning("Ignoring a value of type %s yielded by the task: only Metadata is "
                        "used", type(item).__name__)
