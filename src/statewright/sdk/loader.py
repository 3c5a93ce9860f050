"""Importing a DAG file and collecting the DAGs it defines.

Each file is imported as a fresh module under a name derived from its full path, so two files
with the same base name do not collide and a changed file is imported anew. The file's
directory is on ``sys.path`` while it is imported (as Airflow's dags folder is), so helper
modules beside it can be imported.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import traceback
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from statewright.core.errors import DagDefinitionError
from statewright.sdk import _dag_context
from statewright.sdk.baseoperator import BaseOperator
from statewright.sdk.dag import DAG

__all__ = [
    "LoadResult",
    "dag_code_imports",
    "get_task",
    "list_dag_files",
    "load_dag_file",
    "module_name_for",
]

_LOADER_FILE = str(Path(__file__).resolve())
_COMPAT_FOLDER = str(Path(__file__).resolve().parent.parent / "compat") + os.sep
"""Frames of the Airflow layer's import hook are left out of a file's import error, as the
import machinery's are."""


@dataclass
class LoadResult:
    """The DAGs of one file by dag_id, or the error that kept the file from loading."""

    dags: dict[str, DAG] = field(default_factory=dict)
    error: str | None = None


def module_name_for(path: Path) -> str:
    """A module name unique to the file's full path (``statewright_dag_<hash>_<stem>``)."""
    digest = hashlib.sha1(str(path).encode("utf-8")).hexdigest()[:16]
    stem = re.sub(r"\W", "_", path.stem)
    return f"statewright_dag_{digest}_{stem}"


def list_dag_files(folder: Path) -> list[Path]:
    """The DAG files below ``folder``, sorted: ``*.py`` files, except names starting with ``_``
    or ``.``, and folders starting with ``.`` or ``__pycache__``."""
    if not folder.is_dir():
        return []
    out = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__")))
        out += [Path(root) / n for n in names
                if n.endswith(".py") and not n.startswith(("_", "."))]
    return sorted(out)


def load_dag_file(path: str | Path) -> LoadResult:
    """Import ``path`` and return every DAG it defines (or the error, and no DAGs)."""
    path = Path(path).resolve()
    if not path.is_file():
        return LoadResult(error=f"DAG file {str(path)!r} does not exist or is not a file.")
    from statewright.sdk.plugins import load_plugins

    load_plugins()  # once per process: timetables, strategies and macros DAGs may name
    name = module_name_for(path)
    sys.modules.pop(name, None)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return LoadResult(error=f"{path} cannot be imported as a Python module.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    with _dag_context.collecting_dags() as collected, _on_sys_path(str(path.parent)):
        try:
            with dag_code_imports():
                spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:
            sys.modules.pop(name, None)
            return LoadResult(error=_format_import_error(exc))
    candidates = list(collected)
    for value in list(vars(module).values()):
        if isinstance(value, DAG) and not any(value is d for d in candidates):
            candidates.append(value)
    dags: dict[str, DAG] = {}
    for found in candidates:
        if found.dag_id in dags:
            sys.modules.pop(name, None)
            return LoadResult(
                error=f"DagDefinitionError: the dag_id {found.dag_id!r} is defined more than "
                f"once in {path}; each DAG needs its own dag_id."
            )
        try:
            found.validate()
        except DagDefinitionError as exc:
            sys.modules.pop(name, None)
            return LoadResult(error=f"DagDefinitionError: {exc}")
        dags[found.dag_id] = found
    return LoadResult(dags=dags)


def dag_code_imports() -> AbstractContextManager[None]:
    """While DAG code runs: with ``STATEWRIGHT_AIRFLOW_COMPAT`` on, Airflow's module names
    resolve to statewright's objects (``statewright.compat.airflow``, imported only then)."""
    if not os.environ.get("STATEWRIGHT_AIRFLOW_COMPAT"):
        return nullcontext()
    from statewright.compat import airflow as compat

    return compat.activated() if compat.enabled() else nullcontext()


def get_task(dag: DAG, task_id: str) -> BaseOperator:
    """The task ``task_id`` of ``dag``; DagDefinitionError naming the DAG's tasks when absent."""
    return dag.get_task(task_id)


@contextmanager
def _on_sys_path(directory: str) -> Iterator[None]:
    added = directory not in sys.path
    if added:
        sys.path.insert(0, directory)
    try:
        yield
    finally:
        if added and directory in sys.path:
            sys.path.remove(directory)


def _format_import_error(exc: BaseException) -> str:
    """The traceback, without the frames of the import machinery."""
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if frame.filename != _LOADER_FILE
        and not frame.filename.startswith(("<frozen importlib", _COMPAT_FOLDER))
    ]
    lines = ["Traceback (most recent call last):\n"]
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(exc)
    if type(exc) is ModuleNotFoundError and (exc.name or "").split(".")[0] == "airflow":
        lines.append("This file is written for Airflow: with STATEWRIGHT_AIRFLOW_COMPAT=true "
                     "statewright loads it through its Airflow compatibility layer, and "
                     "`statewright dags check --airflow PATH` says whether it would load.\n")
    return "".join(lines)
