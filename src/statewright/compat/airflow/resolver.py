"""Resolving an Airflow ``module.name`` to statewright's object, lazily, by the name map."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from types import ModuleType
from typing import Any

from statewright.compat.airflow.airflow2 import MOVED_MODULES, RENAMED_NAMES
from statewright.compat.airflow.errors import AirflowNameMissing
from statewright.compat.airflow.names import (
    MODULES,
    RENAMES,
    SEARCHED_LAST,
    own_provider_module,
)

_MISSING = object()


def resolve(module: str, attribute: str) -> Any:
    """statewright's object for ``from <module> import <attribute>``; AirflowNameMissing when
    statewright has none."""
    found = lookup(module, attribute)
    if found is _MISSING:
        raise AirflowNameMissing(module, attribute)
    from statewright.compat.airflow.adapt import for_module

    return for_module(module, found)


def has(module: str, attribute: str) -> bool:
    """Whether statewright answers for ``module.attribute`` (the module must be known)."""
    return lookup(module, attribute) is not _MISSING


def lookup(module: str, attribute: str) -> Any:
    """The object, or ``_MISSING``: the renames, then the module's search list (and that of
    the module an Airflow 2 module moved to), then every public name under ``statewright.sdk``;
    an Airflow 2 name missing so is looked up by its Airflow 3 name (``Dataset``: ``Asset``)."""
    found = _lookup(module, attribute)
    if found is _MISSING and attribute in RENAMED_NAMES:
        found = _lookup(module, RENAMED_NAMES[attribute])
    return found


def _lookup(module: str, attribute: str) -> Any:
    renamed = RENAMES.get(f"{module}.{attribute}")
    if renamed is not None:
        where, _, name = renamed.partition(":")
        return getattr(_import(where), name, _MISSING)
    for where in _search_list(module):
        found = getattr(_import(where), attribute, _MISSING)
        if found is not _MISSING and not isinstance(found, ModuleType):
            return found
    moved = MOVED_MODULES.get(module)
    if moved is not None:
        return _lookup(moved, attribute)
    return _public_names().get(attribute, _MISSING)


def star_names(module: str) -> list[str]:
    """What ``from <module> import *`` gives: the public names of the statewright modules listed
    for it (their ``__all__``), with the renames into it."""
    names: dict[str, None] = {}
    moved = MOVED_MODULES.get(module)
    for where in (*_search_list(module), *(_search_list(moved) if moved else ())):
        loaded = _import(where)
        for name in getattr(loaded, "__all__", ()):
            if not isinstance(getattr(loaded, name, None), ModuleType):
                names[name] = None
    prefix = module + "."
    for airflow_name in RENAMES:
        if airflow_name.startswith(prefix) and "." not in airflow_name[len(prefix):]:
            names[airflow_name[len(prefix):]] = None
    return list(names)


def _search_list(module: str) -> tuple[str, ...]:
    """The statewright modules searched for the names of the Airflow module ``module``."""
    own = own_provider_module(module)
    return (own, *MODULES.get(module, ())) if own else MODULES.get(module, ())


def _import(name: str) -> ModuleType | None:
    """The statewright module ``name``, or None while it does not exist (a later version may
    add it)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            return None
        raise


def _public_names() -> dict[str, Any]:
    """Every name in the ``__all__`` of a module under ``statewright.sdk`` (the first wins)."""
    return dict(_public_names_cached())


@functools.cache
def _public_names_cached() -> tuple[tuple[str, Any], ...]:
    root = importlib.import_module(SEARCHED_LAST)
    found: dict[str, Any] = {}
    modules = [root]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{SEARCHED_LAST}."):
        if info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        loaded = _import(info.name)
        if loaded is not None:
            modules.append(loaded)
    for loaded in modules:
        for name in getattr(loaded, "__all__", ()):
            if name not in found and hasattr(loaded, name):
                found[name] = getattr(loaded, name)
    return tuple(found.items())
