"""Which classes a stored value may name to be imported and rebuilt (Airflow's
``allowed_deserialization_classes``).

A class is allowed when its qualified name matches a glob of
``STATEWRIGHT_ALLOWED_DESERIALIZATION_CLASSES`` (space separated; default
``airflow.* statewright.*``) or a regular expression of
``STATEWRIGHT_ALLOWED_DESERIALIZATION_CLASSES_REGEXP``, or when it comes from your own code:
a module that is not part of Python or of an installed package (DAG files, the modules beside
them, a project checked out and run in place). ``STATEWRIGHT_DESERIALIZE_OWN_MODULES=false``
turns the last rule off, leaving the patterns only, as in Airflow. The built-in types (Decimal,
UUID, NumPy, pandas, ...) are not classes read by name and need no pattern.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import sysconfig
from fnmatch import fnmatchcase
from pathlib import Path

from statewright.sdk.serde._core import SerializationError

_PATTERNS = "STATEWRIGHT_ALLOWED_DESERIALIZATION_CLASSES"
_REGEXPS = "STATEWRIGHT_ALLOWED_DESERIALIZATION_CLASSES_REGEXP"
_OWN = "STATEWRIGHT_DESERIALIZE_OWN_MODULES"
DEFAULT_PATTERNS = "airflow.* statewright.*"


def check_allowed(classname: str) -> None:
    """Raise ``SerializationError`` unless ``classname`` may be imported to read a value."""
    if is_allowed(classname):
        return
    raise SerializationError(
        f"{classname} is not allowed to be read back: it is not in your own modules and "
        f"matches no pattern of {_PATTERNS}; add a pattern for it (for example "
        f"{classname.rpartition('.')[0] or classname}.*)")


def is_allowed(classname: str) -> bool:
    globs, regexps, own = _settings(os.environ.get(_PATTERNS), os.environ.get(_REGEXPS),
                                    os.environ.get(_OWN))
    if any(fnmatchcase(classname, g) for g in globs):
        return True
    if any(r.match(classname) for r in regexps):
        return True
    return own and _own_module(classname.partition(".")[0])


@functools.cache
def _settings(globs: str | None, regexps: str | None, own: str | None
              ) -> tuple[tuple[str, ...], tuple[re.Pattern[str], ...], bool]:
    patterns = tuple((DEFAULT_PATTERNS if globs is None else globs).split())
    expressions = tuple(re.compile(p) for p in (regexps or "").split())
    return patterns, expressions, (own or "true").strip().lower() not in ("0", "false", "no")


def _own_module(top: str) -> bool:
    """The top-level module ``top`` lives outside Python's and the packages' folders (looked
    up without importing it); ``__main__`` (the user's script, ``python -c``, a notebook) is
    always the user's own."""
    if top == "__main__":
        return True
    module = sys.modules.get(top)
    location = getattr(module, "__file__", None) if module is not None else None
    if location is None and module is None:
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(top)
        if spec is not None:
            location = spec.origin if spec.origin not in (None, "namespace") else next(
                iter(spec.submodule_search_locations or []), None)
    if not location:
        return False
    path = Path(location).resolve()
    return not any(path.is_relative_to(root) for root in _installed_roots())


@functools.cache
def _installed_roots() -> tuple[Path, ...]:
    roots: set[Path] = set()
    for scheme_vars in ({}, {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}):
        paths = sysconfig.get_paths(vars=scheme_vars or None)
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            if key in paths:
                roots.add(Path(paths[key]).resolve())
    return tuple(sorted(roots))
