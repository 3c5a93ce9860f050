"""The classes the layer hands to Airflow 2 files: statewright's, taking Airflow 2's arguments.

A DAG, an operator class or the ``dag`` decorator resolved from a module Airflow 2 had
(``airflow``, ``airflow.models``, ``airflow.operators.*`` ...) is handed out as a subclass (a
wrapper for ``dag``) that renames or drops the Airflow 2 arguments of ``airflow2.DAG_ARGUMENTS``
and ``airflow2.TASK_ARGUMENTS`` before statewright's own ``__init__`` sees them, and, with
``STATEWRIGHT_AIRFLOW2_DEFAULTS=true``, fills in Airflow 2's defaults. The subclass keeps the
name, module and documentation of the class it adapts; what it builds is an instance of that
class. Names from the Airflow 3 modules (``airflow.sdk``, the standard provider) are handed out
as they are. See docs/decisions/airflow2-files.md.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from statewright.compat.airflow.airflow2 import (
    AIRFLOW3_ONLY_PREFIXES,
    DAG_ARGUMENTS,
    DAG_ATTRIBUTES,
    DEFAULTS_ENV_VAR,
    TASK_ARGUMENTS,
    TASK_ATTRIBUTES,
)
from statewright.core.errors import ConfigurationError

ADAPTED_MARK = "__airflow2_adapted__"
"""Set on each adapted class and wrapper: the statewright object it adapts."""

_HERE = str(Path(__file__).resolve().parent)
_adapted: dict[int, Any] = {}


def airflow2_defaults(env: Mapping[str, str] | None = None) -> bool:
    """Whether ``STATEWRIGHT_AIRFLOW2_DEFAULTS`` asks for Airflow 2's defaults (true/false)."""
    raw = (os.environ if env is None else env).get(DEFAULTS_ENV_VAR, "").strip().lower()
    if raw in {"", "0", "false", "no", "off"}:
        return False
    if raw in {"1", "true", "yes", "on"}:
        return True
    raise ConfigurationError(f"{DEFAULTS_ENV_VAR}={raw!r} is not a boolean; use true or false.")


def for_module(module: str, value: Any) -> Any:
    """``value`` as the Airflow module ``module`` hands it out: adapted to Airflow 2's
    arguments unless the module is Airflow 3's own."""
    if module.startswith(AIRFLOW3_ONLY_PREFIXES) or value is None:
        return value
    from statewright.sdk.baseoperator import BaseOperator
    from statewright.sdk.dag import DAG
    from statewright.sdk.dag import dag as dag_decorator

    if isinstance(value, type) and (issubclass(value, DAG) or issubclass(value, BaseOperator)):
        if ADAPTED_MARK in vars(value):
            return value
        kind = "dag" if issubclass(value, DAG) else "task"
        return _cached(value, lambda: _adapted_class(value, kind))
    if value is dag_decorator:
        return _cached(value, lambda: _adapted_dag_decorator(value))
    return value


def original_of(value: Any) -> Any:
    """The statewright object an adapted class or wrapper stands for (else ``value``)."""
    return getattr(value, ADAPTED_MARK, None) or value


def _cached(original: Any, build: Callable[[], Any]) -> Any:
    found = _adapted.get(id(original))
    if found is None or found.__dict__.get(ADAPTED_MARK) is not original:
        found = _adapted[id(original)] = build()
    return found


# -- arguments --------------------------------------------------------------------------------


def translate(kwargs: dict[str, Any], table: Mapping[str, str | None],
              accepted: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``kwargs`` with the table's Airflow 2 names renamed (None: dropped); a name the target
    accepts itself is left alone; a new name given as well wins over the old one."""
    out = dict(kwargs)
    for old, new in table.items():
        if old not in out or old in accepted:
            continue
        value = out.pop(old)
        if new is not None and new not in out:
            out[new] = value
    return out


def dag_arguments(kwargs: dict[str, Any], *, airflow2: bool) -> dict[str, Any]:
    """A DAG's keyword arguments in Airflow 3 terms (its ``default_args`` too)."""
    out = translate(kwargs, DAG_ARGUMENTS)
    if isinstance(out.get("default_args"), dict):
        from statewright.sdk.baseoperator import BaseOperator

        out["default_args"] = translate(out["default_args"], TASK_ARGUMENTS,
                                        _accepted(BaseOperator))
    if airflow2:
        out = _with_airflow2_defaults(out)
    return out


def _with_airflow2_defaults(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Airflow 2's defaults for what the DAG leaves out: ``catchup=True``, a daily schedule; a
    cron or timedelta schedule covers data intervals (the run of an interval starts at its
    end and its logical date is the interval's start), as Airflow 2 scheduled them."""
    from statewright.core.timetables import parse_schedule

    out = dict(kwargs)
    out.setdefault("catchup", True)
    schedule = out["schedule"] if "schedule" in out else timedelta(days=1)
    if isinstance(schedule, timedelta) or (
            isinstance(schedule, str) and schedule.strip().lower() not in ("@once", "@continuous")):
        schedule = parse_schedule(schedule, timezone=_timezone_of(out), data_intervals=True)
    out["schedule"] = schedule
    return out


def _timezone_of(kwargs: dict[str, Any]) -> Any:
    zone = kwargs.get("timezone")
    if zone is not None:
        return zone
    start = kwargs.get("start_date") or (kwargs.get("default_args") or {}).get("start_date")
    if isinstance(start, datetime) and start.tzinfo is not None:
        return start.tzinfo
    return "UTC"


def task_arguments(cls: type, kwargs: dict[str, Any]) -> dict[str, Any]:
    """An operator's keyword arguments in Airflow 3 terms (its ``default_args`` too)."""
    accepted = _accepted(cls)
    out = translate(kwargs, TASK_ARGUMENTS, accepted)
    if isinstance(out.get("default_args"), dict):
        out["default_args"] = translate(out["default_args"], TASK_ARGUMENTS, accepted)
    return out


@functools.cache
def _accepted(cls: type) -> frozenset[str]:
    """The keyword arguments a class's ``__init__`` methods name (along its MRO)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or ADAPTED_MARK in vars(klass):
            continue
        try:
            names.update(inspect.signature(inspect.unwrap(init)).parameters)
        except (TypeError, ValueError):
            continue
    return frozenset(names - {"self", "args", "kwargs"})


# -- the adapted objects ----------------------------------------------------------------------


def _adapted_class(original: type, kind: str) -> type:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if kind == "dag":
            kwargs = dag_arguments(kwargs, airflow2=airflow2_defaults())
        else:
            kwargs = task_arguments(type(self), kwargs)
        original.__init__(self, *args, **kwargs)  # type: ignore[misc]
        if kind == "dag" and str(getattr(self, "fileloc", "")).startswith(_HERE):
            self.fileloc = _caller_file()

    namespace: dict[str, Any] = {
        "__init__": __init__,
        "__module__": original.__module__,
        "__qualname__": original.__qualname__,
        "__doc__": original.__doc__,
        ADAPTED_MARK: original,
    }
    for old, new in (DAG_ATTRIBUTES if kind == "dag" else TASK_ATTRIBUTES).items():
        if not hasattr(original, old):  # `dag.schedule_interval` reads `dag.schedule`
            namespace[old] = _Alias(new)
    adapted: type[Any] = type(original.__name__, (original,), namespace)
    if kind == "task" and hasattr(original, "partial"):
        def partial(cls: type[Any], /, **kwargs: Any) -> Any:  # `Op.partial(task_concurrency=2)`
            return super(adapted, cls).partial(**task_arguments(cls, kwargs))

        adapted.partial = classmethod(partial)
    return adapted


class _Alias:
    """An attribute that reads ``name`` (``dag.schedule_interval``: ``dag.schedule``) unless
    the instance sets its own (a non-data descriptor: an operator's ``self.x = ...`` wins)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return self if instance is None else getattr(instance, self.name, None)


def _adapted_dag_decorator(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def dag(dag_id: Any = None, **dag_kwargs: Any) -> Any:
        if callable(dag_id):
            return original(**dag_arguments({}, airflow2=airflow2_defaults()))(dag_id)
        return original(dag_id, **dag_arguments(dag_kwargs, airflow2=airflow2_defaults()))

    setattr(dag, ADAPTED_MARK, original)
    return dag


def _caller_file() -> str:
    """The file of the nearest frame outside this layer and statewright's SDK (the DAG file)."""
    frame = sys._getframe(1)
    sdk = str(Path(__file__).resolve().parent.parent.parent / "sdk")
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith((_HERE, sdk)):
            return name
        frame = frame.f_back  # type: ignore[assignment]
    return ""
