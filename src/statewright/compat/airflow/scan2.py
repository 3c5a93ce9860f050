"""The Airflow 2 constructs of a DAG file's source, each with what it becomes (``dags check``).

Read from the syntax tree, without running the file: imports of moved modules and renamed
names, Airflow 2 DAG and task arguments (in calls and in ``default_args`` dicts), helpers Airflow
3 removed (``days_ago``, ``SubDagOperator``), Airflow 2 context keys (in templates, in
``context["..."]`` and as callable parameters), and the defaults that differ for a DAG built
from an Airflow 2 spelling. The tables are ``airflow2.py``'s.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass
from typing import Any

from statewright.compat.airflow.airflow2 import (
    AIRFLOW2_DEFAULTS,
    AIRFLOW3_ONLY_PREFIXES,
    ARGUMENT_NOTES,
    CALLS,
    CONTEXT_KEYS,
    DAG_ARGUMENTS,
    DEFAULTS_ENV_VAR,
    MOVED_MODULES,
    RENAMED_NAMES,
    TASK_ARGUMENTS,
)
from statewright.compat.airflow.names import MODULES

_KEY_RE = re.compile(r"\b(" + "|".join(sorted(CONTEXT_KEYS, key=len, reverse=True)) + r")\b")
_DAG_NAMES = frozenset({"DAG", "dag"})


@dataclass(frozen=True)
class Construct:
    """One Airflow 2 construct: where, as written, and what it becomes here."""

    line: int
    construct: str
    becomes: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return f"line {self.line}: {self.construct} → {self.becomes}"


def airflow2_constructs(tree: ast.AST) -> list[Construct]:
    """Every Airflow 2 construct of the module ``tree``, in line order, each named once per
    line."""
    found: dict[tuple[int, str], Construct] = {}
    dag_names = _airflow2_dag_names(tree)
    for node in ast.walk(tree):
        for item in _constructs(node, dag_names):
            found.setdefault((item.line, item.construct), item)
    return sorted(found.values(), key=lambda c: (c.line, c.construct))


def _constructs(node: ast.AST, dag_names: set[str]) -> list[Construct]:
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return _imports(node)
    if isinstance(node, ast.Import):
        return [_moved(node.lineno, a.name) for a in node.names if _new_module(a.name)]
    if isinstance(node, ast.Call):
        return _call(node, dag_names)
    if isinstance(node, ast.Dict):
        return [_argument(k.lineno, k.value, TASK_ARGUMENTS, quoted=True) for k in node.keys
                if isinstance(k, ast.Constant) and k.value in TASK_ARGUMENTS]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and "{{" in node.value:
        return [Construct(node.lineno, "{{ " + key + " }}", CONTEXT_KEYS[key])
                for key in dict.fromkeys(_KEY_RE.findall(node.value))]
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
            and node.slice.value in CONTEXT_KEYS:
        key = str(node.slice.value)
        return [Construct(node.lineno, f"[{key!r}]", CONTEXT_KEYS[key])]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        params = [*node.args.args, *node.args.kwonlyargs]
        return [Construct(p.lineno, f"parameter {p.arg}", CONTEXT_KEYS[p.arg])
                for p in params if p.arg in CONTEXT_KEYS]
    return []


def _new_module(module: str) -> str | None:
    """The Airflow 3 module of an Airflow 2 one: the table's, or the standard provider's
    for ``airflow.operators.X`` / ``airflow.sensors.X`` / ``airflow.triggers.X``."""
    if module in MOVED_MODULES:
        return MOVED_MODULES[module]
    parts = module.split(".")
    if len(parts) == 3 and parts[1] in ("operators", "sensors", "triggers"):
        standard = f"airflow.providers.standard.{parts[1]}.{parts[2]}"
        return standard if standard in MODULES else None
    return None


def _imports(node: ast.ImportFrom) -> list[Construct]:
    module = str(node.module)
    out = [_moved(node.lineno, module)] if _new_module(module) else []
    for alias in node.names:
        if alias.name in RENAMED_NAMES:
            out.append(Construct(node.lineno, alias.name, RENAMED_NAMES[alias.name]))
    return out


def _moved(line: int, module: str) -> Construct:
    return Construct(line, f"module {module}", f"{_new_module(module)} (Airflow 3)")


def _call(node: ast.Call, dag_names: set[str]) -> list[Construct]:
    name = _callee(node.func)
    out: list[Construct] = []
    if name.rsplit(".", 1)[-1] in CALLS:
        out.append(Construct(node.lineno, _shown(node), CALLS[name.rsplit(".", 1)[-1]]))
    is_dag = name in dag_names
    for keyword in node.keywords:
        arg = keyword.arg
        if arg is None:
            continue
        if is_dag and arg in DAG_ARGUMENTS:
            out.append(_argument(keyword.lineno, arg, DAG_ARGUMENTS, value=keyword.value))
        elif not is_dag and arg in TASK_ARGUMENTS:
            out.append(_argument(keyword.lineno, arg, TASK_ARGUMENTS))
    if is_dag:
        out.extend(_defaults(node))
    return out


def _argument(line: int, arg: str, table: dict[str, str | None], *, quoted: bool = False,
              value: ast.expr | None = None) -> Construct:
    new = table[arg]
    written = f"{arg!r} (a dict key: default_args)" if quoted else f"{arg}="
    if new is None:
        return Construct(line, written, ARGUMENT_NOTES.get(arg, "accepted and ignored"))
    becomes = f"{new!r} (Airflow 3)" if quoted else f"{new}= (Airflow 3)"
    if new == "schedule" and _is_cron(value):
        becomes += (": runs at each cron time, logical date = that time (Airflow 3); "
                    f"{DEFAULTS_ENV_VAR}=true keeps Airflow 2's data intervals")
    return Construct(line, written, becomes)


def _defaults(node: ast.Call) -> list[Construct]:
    """The Airflow 2 defaults a DAG call leaves to the rule (``catchup``, ``schedule``)."""
    given = {k.arg for k in node.keywords}
    out = []
    if "catchup" not in given:
        two, three = AIRFLOW2_DEFAULTS["catchup"]
        out.append(Construct(node.lineno, "no catchup=",
                             f"catchup={three} (Airflow 3's default; Airflow 2's was {two}: "
                             f"{DEFAULTS_ENV_VAR}=true)"))
    if not given & {"schedule", "schedule_interval", "timetable"}:
        two, three = AIRFLOW2_DEFAULTS["schedule"]
        out.append(Construct(node.lineno, "no schedule",
                             f"schedule={three}: manual runs only (Airflow 3's default; "
                             f"Airflow 2's was {two}: {DEFAULTS_ENV_VAR}=true)"))
    return out


def _airflow2_dag_names(tree: ast.AST) -> set[str]:
    """The local names bound to ``DAG`` / ``dag`` imported from an Airflow 2 module (their calls
    get Airflow 2's argument spellings and the defaults rule), plus ``models.DAG``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            module = node.module
            if not module.startswith("airflow") or module.startswith(AIRFLOW3_ONLY_PREFIXES):
                continue
            names.update(a.asname or a.name for a in node.names if a.name in _DAG_NAMES)
            if module == "airflow" and any(a.name == "models" for a in node.names):
                names.add("models.DAG")
        elif isinstance(node, ast.Import) and any(a.name == "airflow" for a in node.names):
            names.update({"airflow.DAG", "airflow.models.DAG"})
    return names


def _callee(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        base = _callee(func.value)
        return f"{base}.{func.attr}" if base else func.attr
    return ""


def _shown(node: ast.Call) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_cron(value: ast.expr | None) -> bool:
    return (isinstance(value, ast.Constant) and isinstance(value.value, str)
            and value.value.strip().lower() not in ("@once", "@continuous"))
