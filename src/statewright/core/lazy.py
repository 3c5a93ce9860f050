"""Names a package exports but loads on first use (a module ``__getattr__``, PEP 562): what
every process importing the package would otherwise pay for, and few use."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A ``__getattr__`` for ``package``: ``names`` maps an exported name to the module that
    defines it, imported when the name is first read (``from package import name``, ``*``)."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
