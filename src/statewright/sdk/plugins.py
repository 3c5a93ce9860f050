"""Plugins: classes that register timetables, listeners, priority-weight strategies and macros.

A plugin is a subclass of :class:`StatewrightPlugin` (under the Airflow compatibility layer,
``airflow.plugins_manager.AirflowPlugin`` is this class) found in

- a ``.py`` file of the plugins folder (``$STATEWRIGHT_PLUGINS_FOLDER``, by default
  ``$STATEWRIGHT_HOME/plugins``), or
- an installed package's entry point in the group ``statewright.plugins`` (and
  ``airflow.plugins`` when the compatibility layer is on).

:func:`load_plugins` imports them once per process. A plugin file that raises is recorded
(:func:`plugin_errors`: the file and the error) and logged; the other plugins load and the
process goes on.

Listeners are objects (often modules) with Airflow's listener hooks — functions named
``on_task_instance_running``, ``on_task_instance_success``, ``on_task_instance_failed``,
``on_task_instance_skipped``, ``on_dag_run_running``, ``on_dag_run_success``,
``on_dag_run_failed`` — called after a state change has committed (``@hookimpl`` marks them,
as in Airflow, and is optional here).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, ClassVar, TypeVar

from statewright.core.schedules import Timetable

__all__ = [
    "LISTENER_HOOKS",
    "DagRun",
    "PriorityWeightStrategy",
    "StatewrightPlugin",
    "TaskInstance",
    "hookimpl",
    "listeners",
    "load_plugins",
    "plugin_errors",
    "plugins_folder",
    "priority_weight_strategy",
    "register_plugin",
    "reset_plugins",
]

log = logging.getLogger(__name__)

LISTENER_HOOKS = (
    "on_task_instance_running",
    "on_task_instance_success",
    "on_task_instance_failed",
    "on_task_instance_skipped",
    "on_dag_run_running",
    "on_dag_run_success",
    "on_dag_run_failed",
)
ENTRY_POINT_GROUP = "statewright.plugins"
_PACKAGE = "statewright_plugins"
AIRFLOW_ENTRY_POINT_GROUP = "airflow.plugins"

F = TypeVar("F", bound=Callable[..., Any])


def hookimpl(function: F | None = None, **_options: Any) -> Any:
    """Marks a listener hook (Airflow's ``airflow.listeners.hookimpl``); optional here."""
    if function is None:
        return hookimpl
    function.statewright_hookimpl = True  # type: ignore[attr-defined]
    return function


class PriorityWeightStrategy:
    """A task's priority weight from its task instance (Airflow's ``PriorityWeightStrategy``).

    Give ``weight_rule=`` an instance, or the class's dotted path; a plugin must register the
    class (``priority_weight_strategies``) so that the scheduler finds it without importing DAG
    files. The weight is taken when the task instance is created (try number 0).
    """

    def get_weight(self, ti: Any) -> int:
        raise NotImplementedError(f"{type(self).__name__} must implement get_weight(ti)")

    def serialize(self) -> dict[str, Any]:
        return {}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> PriorityWeightStrategy:
        return cls(**data)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.serialize() == other.serialize()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(type(self))


@dataclass
class TaskInstance:
    """A task instance as a listener sees it, after its state change committed."""

    dag_id: str
    run_id: str
    task_id: str
    map_index: int
    try_number: int | None
    state: str
    operator: str | None = None
    task: Any = None
    """The task object when this process has the DAG loaded (else None)."""

    def get_template_context(self) -> dict[str, Any]:
        dag = getattr(self.task, "dag", None)
        return {"ti": self, "task_instance": self, "task": self.task, "dag": dag,
                "run_id": self.run_id, "dag_id": self.dag_id, "map_index": self.map_index,
                "try_number": self.try_number}


@dataclass
class DagRun:
    """A DAG run as a listener sees it, after its state change committed."""

    dag_id: str
    run_id: str
    state: str
    run_type: str | None = None
    logical_date: Any = None
    queued_at: Any = None
    start_date: Any = None
    end_date: Any = None
    version_number: int | None = None
    conf: dict[str, Any] = field(default_factory=dict)


class StatewrightPlugin:
    """Subclass it and list what the plugin brings; Airflow's other attributes (views,
    blueprints, executors, ...) are accepted and ignored."""

    name: ClassVar[str] = ""
    macros: ClassVar[list[Any]] = []
    timetables: ClassVar[list[type[Any]]] = []
    listeners: ClassVar[list[Any]] = []
    priority_weight_strategies: ClassVar[list[type[PriorityWeightStrategy]]] = []

    @classmethod
    def on_load(cls, *args: Any, **kwargs: Any) -> None:
        """Called once when the plugin is registered (Airflow's hook of the same name)."""


_lock = threading.RLock()
_loaded = False
_plugins: list[type[StatewrightPlugin]] = []
_listeners: list[Any] = []
_strategies: dict[str, type[PriorityWeightStrategy]] = {}
_errors: dict[str, str] = {}


def plugins_folder(env: dict[str, str] | None = None) -> Path:
    source = os.environ if env is None else env
    if folder := source.get("STATEWRIGHT_PLUGINS_FOLDER"):
        return Path(folder).expanduser()
    home = source.get("STATEWRIGHT_HOME") or str(Path.home() / ".statewright")
    return Path(home).expanduser() / "plugins"


def load_plugins(folder: str | Path | None = None, *, entry_points: bool = True) -> None:
    """Import the plugins of the folder and of the entry points, once per process."""
    global _loaded
    with _lock:
        if _loaded:
            return
        _loaded = True
        base = Path(folder) if folder is not None else plugins_folder()
        if base.is_dir():
            # As in Airflow, the folder is on sys.path: a plugin imports the folder's packages
            # by their own names (``from my_plugins.strategies import MyStrategy``), and a DAG
            # names a strategy by that path (``weight_rule="my_plugins.strategies.MyStrategy"``).
            if str(base) not in sys.path:
                sys.path.append(str(base))
            # the folder is the package ``statewright_plugins``: its files import each other
            package = ModuleType(_PACKAGE)
            package.__path__ = [str(base)]
            sys.modules[_PACKAGE] = package
            for path in sorted(base.rglob("*.py")):
                if not any(part.startswith((".", "__")) for part in path.relative_to(base).parts):
                    _load_file(path, base)
        if entry_points:
            _load_entry_points()


def reset_plugins() -> None:
    """Forget every plugin (tests; a process loads its plugins once)."""
    global _loaded
    with _lock:
        _loaded = False
        _plugins.clear()
        _listeners.clear()
        _strategies.clear()
        _errors.clear()


def _load_file(path: Path, base: Path) -> None:
    from statewright.sdk.loader import dag_code_imports

    stem = ".".join(path.relative_to(base).with_suffix("").parts)
    name = f"{_PACKAGE}.{stem}"
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"{path} cannot be imported as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        with dag_code_imports():
            spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        sys.modules.pop(name, None)
        _errors[str(path)] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        log.error("plugin file %s failed to import: %s", path, _errors[str(path)])
        return
    for value in list(vars(module).values()):
        if (isinstance(value, type) and issubclass(value, StatewrightPlugin)
                and value is not StatewrightPlugin):
            try:
                register_plugin(value)
            except Exception as exc:
                _errors[str(path)] = f"{value.__name__}: {type(exc).__name__}: {exc}"
                log.error("plugin %s of %s failed to register: %s", value.__name__, path, exc)


def _load_entry_points() -> None:
    from importlib.metadata import entry_points

    from statewright.sdk.loader import dag_code_imports

    groups = [ENTRY_POINT_GROUP]
    if os.environ.get("STATEWRIGHT_AIRFLOW_COMPAT", "").lower() in {"1", "true", "yes", "on"}:
        groups.append(AIRFLOW_ENTRY_POINT_GROUP)
    for group in groups:
        for ep in entry_points(group=group):
            try:
                with dag_code_imports():
                    value = ep.load()
                register_plugin(value)
            except Exception as exc:
                where = f"entry point {ep.name} = {ep.value} ({group})"
                _errors[where] = f"{type(exc).__name__}: {exc}"
                log.error("plugin %s failed to load: %s", where, _errors[where])


def register_plugin(plugin: type[StatewrightPlugin]) -> None:
    """Register what ``plugin`` lists (once per class)."""
    if not (isinstance(plugin, type) and issubclass(plugin, StatewrightPlugin)):
        raise TypeError(f"{plugin!r} is not a plugin class (subclass StatewrightPlugin)")
    with _lock:
        if plugin in _plugins:
            return
        _plugins.append(plugin)
        _listeners.extend(x for x in plugin.listeners if x not in _listeners)
        for strategy in plugin.priority_weight_strategies:
            _strategies[f"{strategy.__module__}.{strategy.__qualname__}"] = strategy
        for timetable in plugin.timetables:
            if (isinstance(timetable, type) and issubclass(timetable, Timetable)
                    and "type_name" not in timetable.__dict__):
                Timetable._registry[f"{timetable.__module__}.{timetable.__qualname__}"] = (
                    timetable)
        if plugin.macros:
            from statewright.sdk import macros

            name = plugin.name or plugin.__name__
            setattr(macros, name, SimpleNamespace(**{m.__name__: m for m in plugin.macros}))
        plugin.on_load()


def listeners() -> list[Any]:
    return list(_listeners)


def registered() -> list[type[StatewrightPlugin]]:
    """The plugin classes registered, in the order they were."""
    return list(_plugins)


def plugin_errors() -> dict[str, str]:
    """Plugin file (or entry point) → the error that stopped it loading."""
    return dict(_errors)


def priority_weight_strategy(path: str) -> type[PriorityWeightStrategy] | None:
    """The registered strategy class of a dotted path. A file of the plugins folder is matched
    by its file name and class name too (it may be imported under another package name)."""
    load_plugins()
    found = _strategies.get(path)
    if found is not None:
        return found
    module, _, cls_name = path.rpartition(".")
    tail = f"{module.rpartition('.')[2]}.{cls_name}"
    for key, strategy in _strategies.items():
        head, _, name = key.rpartition(".")
        if f"{head.rpartition('.')[2]}.{name}" == tail:
            return strategy
    return None
