"""``@asset``: an asset and the DAG that materialises it, from one function (Airflow 3).

``@asset(schedule=None, uri="s3://b/k")`` on ``def name(...)`` makes ``Asset(name="name",
uri=...)`` and a DAG ``name`` (``catchup=False``) with one task ``name`` whose outlet is the asset.
The function's parameters without a default name its inlets: ``self`` receives the asset,
``context`` the task's context, a context key (``outlet_events``, ``dag_run``, ...) its value,
and any other name the asset of that name (read when the task runs); parameters with a default
keep it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from statewright.core.errors import DagDefinitionError
from statewright.sdk.assets import Asset, AssetNameRef, AssetWatcher
from statewright.sdk.dag import DAG
from statewright.sdk.operators.python import PythonOperator

__all__ = ["AssetDefinition", "asset"]

#: Context keys an ``@asset`` function may take by name (Airflow 3.3), rather than inlets.
_CONTEXT_KEYS = frozenset({"outlet_events", "inlet_events", "triggering_asset_events", "dag_run",
                           "ti", "task_instance", "params", "run_id", "logical_date",
                           "partition_key", "partition_date"})
_SPECIAL = ("self", "context", *sorted(_CONTEXT_KEYS))


def _check_arguments(function: Callable[..., Any]) -> None:
    for name, p in inspect.signature(function).parameters.items():
        if p.kind is p.VAR_POSITIONAL:
            raise TypeError(f"wildcard '*{name}' is not supported in @asset")
        if p.kind is p.VAR_KEYWORD:
            raise TypeError(f"wildcard '**{name}' is not supported in @asset")
        if p.kind is p.POSITIONAL_ONLY and p.default is p.empty:
            raise TypeError(f"positional-only argument '{name}' without a default is not "
                            "supported in @asset")


class _AssetMainOperator(PythonOperator):
    """The task of an ``@asset`` DAG: calls the function with its assets and context."""

    def __init__(self, *, definition: AssetDefinition, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._definition = definition

    def execute_callable(self, context: Mapping[str, Any]) -> Any:
        known = getattr(context.get("inlet_events"), "assets", {}) or {}
        kwargs: dict[str, Any] = {}
        for name, p in inspect.signature(self.python_callable).parameters.items():
            if p.default is not p.empty:
                kwargs[name] = p.default
            elif name == "self":
                kwargs[name] = self._definition
            elif name == "context":
                kwargs[name] = context
            elif name in _CONTEXT_KEYS:
                kwargs[name] = context.get(name)
            else:
                kwargs[name] = known.get(name) or Asset(name=name)
        return self.python_callable(**kwargs)


class AssetDefinition(Asset):
    """The asset an ``@asset`` function defines (usable wherever an Asset is)."""

    def __init__(self, function: Callable[..., Any], source: asset) -> None:
        super().__init__(name=function.__name__, uri=source.uri, group=source.group,
                         extra=source.extra, watchers=source.watchers)
        _check_arguments(function)
        self._function = function
        inlets = [AssetNameRef(n) for n, p in inspect.signature(function).parameters.items()
                  if n not in _SPECIAL and p.default is p.empty]
        with DAG(source.dag_id or self.name, schedule=source.schedule, catchup=False,
                 description=source.description, tags=source.tags,
                 is_paused_upon_creation=source.is_paused_upon_creation,
                 params=source.params) as dag:
            _AssetMainOperator(task_id=function.__name__, python_callable=function,
                               inlets=inlets, outlets=[self], definition=self)
        self.dag = dag

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function(*args, **kwargs)


class asset:
    """``@asset(schedule=..., uri=..., group=..., extra=..., watchers=..., dag_id=...)``."""

    def __init__(self, *, schedule: Any, uri: str | None = None, group: str | None = None,
                 extra: Mapping[str, Any] | None = None,
                 watchers: Sequence[AssetWatcher] | None = None, dag_id: str | None = None,
                 description: str | None = None, tags: Sequence[str] | None = None,
                 is_paused_upon_creation: bool | None = None,
                 params: Mapping[str, Any] | None = None) -> None:
        self.schedule, self.uri, self.group, self.extra = schedule, uri, group, extra
        self.watchers, self.dag_id, self.description = watchers, dag_id, description
        self.tags = list(tags or [])
        self.is_paused_upon_creation = is_paused_upon_creation
        self.params = dict(params or {})

    def __call__(self, function: Callable[..., Any]) -> AssetDefinition:
        if not callable(function) or not getattr(function, "__name__", None):
            raise DagDefinitionError(f"@asset decorates a function, got {function!r}")
        return AssetDefinition(function, self)
