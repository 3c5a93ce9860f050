"""The import hook: ``airflow.*`` modules built as aliases whose names resolve to statewright's.

No module is copied: an alias module holds nothing but a ``__getattr__`` that asks the resolver,
so ``airflow.sdk.DAG is statewright.sdk.DAG``. The finder sits first on ``sys.meta_path`` only
while DAG code runs (``activated()``), or for good after ``install()``; leaving the last
activation takes the finder and the alias modules away again and puts back any real ``airflow``
modules that were imported before, so a real Airflow package in the same environment is never
shadowed outside DAG loading.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from statewright.compat.airflow.errors import AirflowModuleMissing, AirflowNameMissing
from statewright.compat.airflow.names import EXAMPLE_PLUGINS, known_module
from statewright.compat.airflow.resolver import resolve, star_names

ROOT = "airflow"


def is_airflow_module(name: str) -> bool:
    return name == ROOT or name.startswith(ROOT + ".")


class AliasModule(ModuleType):
    """An Airflow module whose attributes are statewright's objects, resolved on first use."""

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "__all__":  # `from airflow.sdk import *`
            return star_names(self.__name__)
        if attribute.startswith("_") or self.__name__ == EXAMPLE_PLUGINS:
            # (the example plugins' names are modules: the import system looks for them next)
            raise AttributeError(f"module {self.__name__!r} has no attribute {attribute!r}")
        try:
            value = resolve(self.__name__, attribute)
        except AirflowNameMissing:
            submodule = f"{self.__name__}.{attribute}"  # `from airflow import models`
            if not known_module(submodule):
                raise
            value = importlib.import_module(submodule)
        setattr(self, attribute, value)  # resolved once
        return value

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *star_names(self.__name__)})


class AirflowAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``airflow`` and its submodules: an alias for each module the name map knows, and
    AirflowModuleMissing (naming the module) for the others."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not is_airflow_module(fullname):
            return None
        if fullname.startswith(EXAMPLE_PLUGINS + "."):
            return _plugin_file_spec(fullname)
        if not known_module(fullname):
            raise AirflowModuleMissing(_requested(fullname))
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = AliasModule(spec.name)
        module.__path__ = []  # a package: its submodules come through this finder too
        module.__doc__ = f"Airflow's {spec.name}, answered by statewright (compatibility layer)."
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: names are resolved when they are asked for."""


def _plugin_file_spec(fullname: str) -> importlib.machinery.ModuleSpec | None:
    """``airflow.example_dags.plugins.X`` is the file ``X.py`` of the plugins folder (where
    Airflow's example plugins go to be loaded)."""
    from statewright.sdk.plugins import plugins_folder

    rest = fullname[len(EXAMPLE_PLUGINS) + 1:].split(".")
    path = plugins_folder().joinpath(*rest[:-1], rest[-1] + ".py")
    if not path.is_file():
        raise AirflowModuleMissing(fullname)
    spec = importlib.util.spec_from_file_location(fullname, path)
    if spec is not None:
        spec.loader_state = _PLUGIN_FILE  # ours: taken away with the layer, like the aliases
    return spec


_PLUGIN_FILE = "statewright-plugins-folder"


def _is_ours(module: ModuleType) -> bool:
    """An alias module, or a plugins-folder file loaded under an ``airflow.`` name."""
    if isinstance(module, AliasModule):
        return True
    spec = getattr(module, "__spec__", None)
    return getattr(spec, "loader_state", None) == _PLUGIN_FILE


def _requested(fullname: str) -> str:
    """The module the import statement asked for: ``import airflow.providers.x.y`` reaches the
    finder first with its parent ``airflow.providers.x``; the full name is a local of the import
    machinery's frames above (for the error message only)."""
    best = fullname
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            name = frame.f_locals.get("name")
            if isinstance(name, str) and name.startswith(fullname + ".") and len(name) > len(best):
                best = name
        frame = frame.f_back  # type: ignore[assignment]
    return best


FINDER = AirflowAliasFinder()
_lock = threading.RLock()
_depth = 0
_installed = False
_saved: dict[str, ModuleType] = {}


def install() -> None:
    """Turn the layer on for the rest of this process (scripts, tests, task processes)."""
    global _installed
    with _lock:
        if not _installed and _depth == 0:
            _put_in()
        _installed = True


def uninstall() -> None:
    """Undo ``install()`` (the layer stays on while an ``activated()`` block is open)."""
    global _installed
    with _lock:
        if _installed and _depth == 0:
            _take_out()
        _installed = False


def is_active() -> bool:
    return FINDER in sys.meta_path


@contextmanager
def activated() -> Iterator[None]:
    """The layer on for the block (nested and concurrent blocks share one activation)."""
    global _depth
    with _lock:
        if _depth == 0 and not _installed:
            _put_in()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and not _installed:
                _take_out()


def _put_in() -> None:
    for name in [n for n in sys.modules if is_airflow_module(n)]:
        module = sys.modules.pop(name)
        if not _is_ours(module):
            _saved[name] = module  # a real Airflow module: back when the layer goes
    if FINDER not in sys.meta_path:
        sys.meta_path.insert(0, FINDER)


def _take_out() -> None:
    while FINDER in sys.meta_path:
        sys.meta_path.remove(FINDER)
    for name in [n for n in sys.modules if is_airflow_module(n)]:
        if _is_ours(sys.modules[name]):
            del sys.modules[name]
    sys.modules.update(_saved)
    _saved.clear()
