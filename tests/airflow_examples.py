"""Airflow's example DAG files with only their imports changed to statewright's modules.

``tests/fixtures/airflow_examples/core`` and ``.../standard`` hold the files unedited (the
compatibility layer's tests load them as they are). Tests of statewright's own SDK use the same
files with each ``from airflow.X import ...`` / ``import airflow.X as ...`` line rewritten by the
table below, made at test time, so the repository keeps one copy of each file.
"""

from __future__ import annotations

import ast
import atexit
import re
import shutil
import tempfile
from functools import cache
from pathlib import Path

UNEDITED = Path(__file__).resolve().parent / "fixtures" / "airflow_examples"

# The Airflow module an example imports from -> the statewright module that provides those names.
AIRFLOW_TO_STATEWRIGHT = {
    "airflow.sdk": "statewright.sdk",
    "airflow.providers.standard.operators.bash": "statewright.sdk",
    "airflow.providers.standard.operators.empty": "statewright.sdk",
    "airflow.providers.standard.operators.python": "statewright.sdk",
    "airflow.providers.standard.operators.hitl": "statewright.sdk",
    "airflow.sdk.bases.notifier": "statewright.sdk",
    "airflow.providers.common.compat.sdk": "statewright.sdk",
    "airflow.providers.standard.triggers.file": "statewright.sdk.triggers.watchers",
    "airflow.timetables.assets": "statewright.sdk",
    "airflow.timetables.trigger": "statewright.core.timetables",
}

_FROM = re.compile(r"^(?P<indent>\s*)from\s+(?P<module>airflow(?:\.\w+)*)\s+import\b")
_IMPORT = re.compile(r"^(?P<indent>\s*)import\s+(?P<module>airflow(?:\.\w+)*)(?P<rest>.*)$")


class UnmappedAirflowImport(ValueError):
    """An Airflow import line the table cannot rewrite."""


def _target(module: str, source: str, number: int) -> str:
    try:
        return AIRFLOW_TO_STATEWRIGHT[module]
    except KeyError:
        raise UnmappedAirflowImport(
            f"{source}, line {number}: no statewright module is mapped for {module!r}; add it "
            f"to AIRFLOW_TO_STATEWRIGHT in tests/airflow_examples.py") from None


def _rewrite_line(line: str, source: str, number: int) -> str:
    if m := _FROM.match(line):
        return line.replace(m["module"], _target(m["module"], source, number), 1)
    if m := _IMPORT.match(line):
        if not re.match(r"\s+as\s+\w+\s*(#.*)?$", m["rest"]):
            raise UnmappedAirflowImport(
                f"{source}, line {number}: {line.strip()!r} imports an Airflow module without "
                f"'as NAME'; the code would still say 'airflow.', so it cannot be rewritten")
        return line.replace(m["module"], _target(m["module"], source, number), 1)
    return line


def airflow_imports(text: str) -> list[str]:
    """Every module an ``import``/``from ... import`` statement of ``text`` takes from Airflow."""
    found = []
    for node in ast.walk(ast.parse(text)):
        modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                   else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        found += [m for m in modules if m == "airflow" or m.startswith("airflow.")]
    return found


def with_statewright_imports(text: str, source: str = "<text>") -> str:
    """``text`` with the first line of each Airflow import statement rewritten by
    ``AIRFLOW_TO_STATEWRIGHT`` and every other line (docstrings too) as it was; fails if an
    Airflow import is left."""
    starts = {node.lineno for node in ast.walk(ast.parse(text, source))
              if isinstance(node, ast.Import | ast.ImportFrom)}
    lines = text.splitlines(keepends=True)
    out = "".join(_rewrite_line(line, source, n) if n in starts else line
                  for n, line in enumerate(lines, 1))
    left = airflow_imports(out)
    assert not left, f"{source} still imports {left} after the rewrite"
    return out


@cache
def _folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="statewright-airflow-examples-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def airflow_example(name: str) -> Path:
    """The unedited ``name`` (``core/...py`` or ``standard/...py``) rewritten to statewright's
    imports, written to a temporary file whose path is returned."""
    text = with_statewright_imports((UNEDITED / name).read_text(), source=name)
    path = _folder() / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
