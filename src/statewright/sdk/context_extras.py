"""What templating adds to a task's context: params with Param semantics, Airflow's ``macros``,
``var`` and ``conn`` (variables and connections, read when a template or a task first asks for
one), the ``prev_*_success`` values, and entries computed on first use (``lazy``).

``lazy`` is where context entries backed by services plug in with one line each (for example
``lazy={"var": make_variable_accessor}``): each becomes a proxy that calls its factory the first
time a task or a template reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from lazy_object_proxy import Proxy

from statewright.sdk import macros
from statewright.sdk.params import NOTSET, ParamsDict, conf_overrides_params
from statewright.sdk.variables import template_accessors

if TYPE_CHECKING:
    from statewright.sdk.baseoperator import BaseOperator
    from statewright.sdk.dag import DAG

__all__ = ["PREV_KEYS", "context_additions", "run_params"]

PREV_KEYS = (
    "prev_data_interval_start_success",
    "prev_data_interval_end_success",
    "prev_start_date_success",
    "prev_end_date_success",
)


def run_params(dag: DAG, task: BaseOperator, conf: Mapping[str, Any]) -> dict[str, Any]:
    """The params a try sees: the DAG's, then the task's, then the run's conf on top (unless
    ``dag_run_conf_overrides_params`` is off). A param with no default and no value is None."""
    merged = ParamsDict(dag.params)
    merged.update(ParamsDict(task.params))
    values = {k: (None if v is NOTSET else v) for k, v in merged.items()}
    if conf_overrides_params():
        values.update(conf)
    return values


def context_additions(*, lazy: Mapping[str, Callable[[], Any]] | None,
                      prev: Mapping[str, datetime | None] | None) -> dict[str, Any]:
    """``macros``, the ``prev_*_success`` keys (None when there was no successful run before)
    and the lazily computed entries."""
    out: dict[str, Any] = {"macros": macros.template_macros(),  # functions, never modules
                           **template_accessors()}  # var, conn: read on use
    out.update({key: (prev or {}).get(key) for key in PREV_KEYS})
    for key, factory in (lazy or {}).items():
        out[key] = Proxy(factory)
    return out
