"""What a DAG file's source uses, read without running it: Airflow imports and features."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from statewright.compat.airflow.hook import is_airflow_module
from statewright.compat.airflow.names import (
    CALL_FEATURES,
    EXAMPLE_PLUGINS,
    FEATURES,
    known_module,
)
from statewright.compat.airflow.resolver import has
from statewright.compat.airflow.scan2 import Construct, airflow2_constructs

_NOT_TASKS = frozenset({"functools", "os", "re", "sys"})
"""Modules whose attributes share a name with a task feature (``functools.partial``)."""


@dataclass
class SourceScan:
    """The Airflow names a file imports, what statewright lacks of them, and its features."""

    airflow_imports: list[tuple[str, str | None]] = field(default_factory=list)
    """(module, name) for ``from module import name``; (module, None) for ``import module``."""
    imports_statewright: bool = False
    features: set[str] = field(default_factory=set)
    airflow2: list[Construct] = field(default_factory=list)
    """The Airflow 2 constructs, each with what it becomes (``scan2``)."""

    @property
    def uses_airflow(self) -> bool:
        return bool(self.airflow_imports)

    def missing(self) -> list[str]:
        """Each Airflow module or name statewright has no equivalent of, in file order."""
        out: list[str] = []
        for module, name in self.airflow_imports:
            if _in_plugins_folder(module, name):
                continue
            if not known_module(module):
                entry = f"{module} (module)"
            elif name is not None and name != "*" and not has(module, name) \
                    and not known_module(f"{module}.{name}"):  # `from airflow import models`
                entry = f"{module}.{name}"
            else:
                continue
            if entry not in out:
                out.append(entry)
        return out


def _in_plugins_folder(module: str, name: str | None) -> bool:
    """``airflow.example_dags.plugins.X`` (or ``from …plugins import X``) names the plugins
    folder's file ``X.py``, which the layer loads: known where that file is there."""
    from statewright.sdk.plugins import plugins_folder

    if module == EXAMPLE_PLUGINS and name not in (None, "*"):
        parts = [str(name)]
    elif module.startswith(EXAMPLE_PLUGINS + "."):
        parts = module[len(EXAMPLE_PLUGINS) + 1:].split(".")
    else:
        return False
    return plugins_folder().joinpath(*parts[:-1], parts[-1] + ".py").is_file()


def scan_source(source: str, filename: str = "<dag file>") -> SourceScan:
    """Scan ``source``; a SyntaxError propagates (the loader reports it for the file)."""
    tree = ast.parse(source, filename=filename)
    scan = SourceScan()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            _imported(scan, node.module, [a.name for a in node.names])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                _imported(scan, alias.name, None)
        elif isinstance(node, ast.Attribute) and node.attr in CALL_FEATURES:
            if not (isinstance(node.value, ast.Name) and node.value.id in _NOT_TASKS):
                scan.features.add(CALL_FEATURES[node.attr])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if "{{" in node.value and "}}" in node.value:
                scan.features.add("Jinja templating")
    if scan.uses_airflow:
        scan.airflow2 = airflow2_constructs(tree)
    return scan


def _imported(scan: SourceScan, module: str, names: list[str] | None) -> None:
    if module == "statewright" or module.startswith("statewright."):
        scan.imports_statewright = True
    if not is_airflow_module(module):
        return
    for name in names if names is not None else [None]:
        scan.airflow_imports.append((module, name))
        if name is not None and name in FEATURES:
            scan.features.add(FEATURES[name])
