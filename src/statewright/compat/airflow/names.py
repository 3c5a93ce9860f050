"""The Airflow name map, as data: which statewright modules answer for each Airflow module.

A name is resolved lazily, when a DAG file imports it: first ``RENAMES`` (the Airflow names that
statewright spells differently), then each statewright module that ``MODULES`` lists for the
Airflow module, in order, then every public name under ``statewright.sdk``. So a name that
statewright gains later works without a change here, and a name it lacks is reported by module
and name. Nothing here imports statewright's modules.
"""

from __future__ import annotations

from statewright.compat.airflow.airflow2 import MOVED_MODULES

DOCS_PAGE = "docs/coming-from-airflow.md"
"""The page that says, for each Airflow feature, what statewright offers instead."""

EXAMPLE_PLUGINS = "airflow.example_dags.plugins"
"""Airflow's example plugins package: its modules are the files of the plugins folder."""

_LEGACY = "statewright.compat.airflow.legacy"
"""What the layer itself answers for Airflow 2 modules removed in Airflow 3."""
_AUTHORING = (
    "statewright.sdk",
    "statewright.sdk.operators",
    "statewright.sdk.sensors",
    "statewright.sdk.exceptions",
)
_OPERATORS = ("statewright.sdk.operators", "statewright.sdk", "statewright.sdk.branch")
_SENSORS = ("statewright.sdk.sensors", "statewright.sdk")
_TRIGGERS = ("statewright.sdk.triggers", "statewright.sdk.sensors")
_EXCEPTIONS = ("statewright.sdk.exceptions", "statewright.core.errors")
_STANDARD = {
    "operators": ("bash", "branch", "datetime", "empty", "latest_only", "python",
                  "smooth", "trigger_dagrun", "weekday", "hitl"),
    "sensors": ("bash", "date_time", "external_task", "filesystem", "python", "time",
                "time_delta", "weekday"),
    "triggers": ("external_task", "file", "temporal", "hitl"),
    "utils": ("weekday",),
    "decorators": ("bash", "branch_python", "python", "sensor", "short_circuit"),
}


def _standard_modules() -> dict[str, tuple[str, ...]]:
    kinds = {"operators": _OPERATORS, "sensors": _SENSORS, "triggers": _TRIGGERS,
             "utils": ("statewright.sdk",), "decorators": ("statewright.sdk",)}
    table: dict[str, tuple[str, ...]] = {}
    for kind, names in _STANDARD.items():
        for name in names:
            table[f"airflow.providers.standard.{kind}.{name}"] = kinds[kind]
            # Airflow 2 spelled the same modules without the provider prefix.
            if kind in ("operators", "sensors", "triggers"):
                table[f"airflow.{kind}.{name}"] = kinds[kind]
    return table


MODULES: dict[str, tuple[str, ...]] = {
    "airflow": _AUTHORING,  # `from airflow import DAG` (Airflow 2)
    "airflow.sdk": _AUTHORING,
    "airflow.sdk.exceptions": _EXCEPTIONS,
    "airflow.sdk.bases.operator": _AUTHORING,
    "airflow.sdk.bases.sensor": _SENSORS,
    "airflow.sdk.bases.hook": ("statewright.sdk",),
    "airflow.sdk.bases.notifier": ("statewright.sdk",),
    "airflow.providers.standard.exceptions": ("statewright.sdk.operators.hitl", *_EXCEPTIONS),
    "airflow.sdk.definitions.dag": _AUTHORING,
    "airflow.sdk.definitions.param": ("statewright.sdk",),
    "airflow.sdk.definitions.taskgroup": ("statewright.sdk",),
    "airflow.sdk.definitions.asset": ("statewright.sdk",),
    "airflow.sdk.definitions.deadline": ("statewright.sdk.deadline",),
    "airflow.sdk.definitions.retry_policy": ("statewright.sdk.retry_policy",),
    "airflow.sdk.definitions.callback": ("statewright.sdk.deadline",),
    "airflow.decorators": ("statewright.sdk", f"{_LEGACY}.decorators"),
    "airflow.models": (*_AUTHORING, f"{_LEGACY}.models", f"{_LEGACY}.orm"),  # Pool: orm
    "airflow.models.dag": _AUTHORING,
    "airflow.models.baseoperator": _AUTHORING,
    "airflow.models.param": ("statewright.sdk",),
    "airflow.models.variable": ("statewright.sdk",),
    "airflow.models.connection": ("statewright.sdk",),
    "airflow.models.xcom_arg": ("statewright.sdk", "statewright.sdk.xcom_arg"),
    "airflow.models.xcom": ("statewright.sdk.xcom_backend", f"{_LEGACY}.models"),
    "airflow.sdk.bases.xcom": ("statewright.sdk.xcom_backend",),
    "airflow.providers.common.io.xcom.backend": ("statewright.sdk.xcom_objectstorage",),
    "airflow.models.taskinstance": ("statewright.sdk.context",),
    "airflow.operators": _OPERATORS,
    "airflow.operators.bash_operator": _OPERATORS,
    "airflow.operators.dummy": _OPERATORS,
    "airflow.operators.dummy_operator": _OPERATORS,
    "airflow.operators.python_operator": _OPERATORS,
    "airflow.sensors": _SENSORS,
    "airflow.sensors.base": _SENSORS,
    "airflow.sensors.base_sensor_operator": _SENSORS,
    "airflow.triggers.base": ("statewright.sdk.triggers",),
    "airflow.hooks.base": ("statewright.sdk",),
    "airflow.providers.standard.hooks.subprocess": ("statewright.sdk.operators.bash",),
    "airflow.providers.common.compat.sdk": (*_AUTHORING, "statewright.core.trigger_rules"),
    "airflow.exceptions": _EXCEPTIONS,
    "airflow.utils.trigger_rule": ("statewright.core.trigger_rules",),
    "airflow.utils.state": ("statewright.core.states", f"{_LEGACY}.state"),
    "airflow.utils.task_group": ("statewright.sdk",),
    "airflow.utils.edgemodifier": ("statewright.sdk",),
    "airflow.utils.helpers": ("statewright.sdk",),
    "airflow.utils.context": ("statewright.sdk.context",),
    "airflow.utils.log.logging_mixin": ("statewright.sdk.logging_mixin",),
    "airflow.sdk.execution_time.context": ("statewright.sdk.task_state", "statewright.sdk.context"),
    "airflow.plugins_manager": ("statewright.sdk.plugins",),
    "airflow.listeners": ("statewright.sdk.plugins",),
    "airflow.task.priority_strategy": ("statewright.sdk.plugins",),
    "airflow.utils.weight_rule": ("statewright.sdk.weight_rule",),
    "airflow.models.dagrun": ("statewright.sdk.plugins",),
    EXAMPLE_PLUGINS: ("statewright.sdk.plugins",),  # its modules: files of the plugins folder
    "airflow.utils.dates": (f"{_LEGACY}.dates", "statewright.sdk"),
    "airflow.utils.decorators": (f"{_LEGACY}.dates",),  # apply_defaults
    "airflow.settings": (f"{_LEGACY}.settings", f"{_LEGACY}.orm"),  # Session: orm
    "airflow.configuration": (f"{_LEGACY}.settings",),
    "airflow.operators.subdag": (f"{_LEGACY}.subdag",),
    "airflow.macros": ("statewright.sdk.macros",),
    "airflow.utils.timezone": ("statewright.sdk.timezone", "statewright.sdk"),
    "airflow.sdk.timezone": ("statewright.sdk.timezone",),
    "airflow.timetables.base": ("statewright.sdk.timetables", "statewright.sdk"),
    "airflow.timetables.interval": ("statewright.sdk.timetables", "statewright.sdk"),
    "airflow.timetables.trigger": ("statewright.sdk.timetables", "statewright.sdk"),
    "airflow.timetables.events": ("statewright.sdk.timetables", "statewright.sdk"),
    "airflow.timetables.simple": ("statewright.sdk.timetables", "statewright.sdk"),
    "airflow.timetables.assets": ("statewright.sdk.timetables", "statewright.sdk"),
    "airflow.partition_mappers.base": ("statewright.sdk.partitions",),
    "airflow.partition_mappers.window": ("statewright.sdk.partitions",),
    "airflow.partition_mappers.temporal": ("statewright.sdk.partitions",),
    "airflow.partition_mappers.identity": ("statewright.sdk.partitions",),
    "airflow.partition_mappers.product": ("statewright.sdk.partitions",),
    # Mail and object storage (statewright.sdk.email, statewright.sdk.object_storage).
    "airflow.utils.email": ("statewright.sdk.email",),
    "airflow.io.path": ("statewright.sdk.object_storage",),
    "airflow.sdk.io.path": ("statewright.sdk.object_storage",),
    "airflow.sdk.io": ("statewright.sdk.object_storage",),
    "airflow.io": ("statewright.sdk.object_storage",),
    **_standard_modules(),
}
"""Airflow module → the statewright modules searched for its names, in order."""

RENAMES: dict[str, str] = {
    "airflow.plugins_manager.AirflowPlugin": "statewright.sdk.plugins:StatewrightPlugin",
    "airflow.models.taskinstance.TaskInstance": "statewright.sdk.plugins:TaskInstance",
    "airflow.models.dagrun.DagRun": "statewright.sdk.plugins:DagRun",
    "airflow.exceptions.AirflowException": "statewright.core.errors:StatewrightError",
    "airflow.sdk.BaseXCom": "statewright.sdk.xcom_backend:BaseXCom",
    "airflow.sdk.exceptions.AirflowException": "statewright.core.errors:StatewrightError",
    "airflow.exceptions.AirflowSensorTimeout": "statewright.sdk.exceptions:SensorTimeout",
    # Airflow 2's Connection made empty, then set_password: to add through settings.Session.
    "airflow.models.Connection": f"{_LEGACY}.orm:Connection",
    "airflow.operators.dummy.DummyOperator": "statewright.sdk.operators:EmptyOperator",
    "airflow.operators.dummy_operator.DummyOperator": "statewright.sdk.operators:EmptyOperator",
    "airflow.utils.helpers.chain": "statewright.sdk:chain",
    "airflow.utils.helpers.cross_downstream": "statewright.sdk:cross_downstream",
    # Airflow's timezone module (airflow.utils.timezone), a name of the compat sdk module.
    "airflow.providers.common.compat.sdk.timezone": "statewright.sdk:timezone",
}
"""``airflow.module.Name`` → ``statewright.module:Name`` where statewright's name differs or where
the Airflow module's usual search would find the wrong object."""

SEARCHED_LAST = "statewright.sdk"
"""Where a name no listed module has is looked for last: every public name of its modules."""

PROVIDERS_PREFIX = "airflow.providers."

OWN_PROVIDERS = "statewright.providers."
"""An Airflow provider module ``airflow.providers.X`` is answered by ``statewright.providers.X``
when statewright has that module (its hooks and operators at Airflow's paths)."""


def own_provider_module(module: str) -> str | None:
    """The statewright module at the Airflow provider path ``module``, when there is one."""
    if not module.startswith(PROVIDERS_PREFIX):
        return None
    import importlib.util

    ours = OWN_PROVIDERS + module[len(PROVIDERS_PREFIX):]
    try:
        return ours if importlib.util.find_spec(ours) is not None else None
    except ModuleNotFoundError:  # a parent package is missing
        return None


def provider_package(module: str) -> str | None:
    """The pip package of an Airflow provider module (``airflow.providers.amazon.aws...`` →
    ``apache-airflow-providers-amazon``); None outside ``airflow.providers``."""
    if not module.startswith(PROVIDERS_PREFIX):
        return None
    parts = module[len(PROVIDERS_PREFIX):].split(".")
    # Two-level providers: apache.*, cncf.*, common.*, microsoft.*
    width = 2 if parts[0] in {"apache", "cncf", "common", "microsoft", "atlassian"} else 1
    return "apache-airflow-providers-" + "-".join(parts[:width])


def known_module(module: str) -> bool:
    """Whether statewright answers for the Airflow module ``module`` (or a package above one)."""
    if module in MODULES or own_provider_module(module) is not None:
        return True
    if module in MOVED_MODULES:  # an Airflow 2 module: known where its new one is
        return known_module(MOVED_MODULES[module])
    prefix = module + "."
    return any(key.startswith(prefix) for key in (*MODULES, *MOVED_MODULES))


FEATURES: dict[str, str] = {
    "Asset": "assets",
    "AssetAlias": "assets",
    "AssetWatcher": "assets (watchers)",
    "asset": "assets",
    "Metadata": "assets",
    "Param": "params",
    "TaskGroup": "task groups",
    "task_group": "task groups",
    "Label": "edge labels",
    "setup": "setup and teardown tasks",
    "teardown": "setup and teardown tasks",
    "Variable": "variables",
    "Connection": "connections",
    "BaseHook": "connections",
    "ObjectStoragePath": "object storage",
    "BaseNotifier": "notifiers",
    "TriggerDagRunOperator": "triggering other DAGs",
    "ExternalTaskSensor": "cross-DAG dependencies",
    "ExternalTaskMarker": "cross-DAG dependencies",
    "LatestOnlyOperator": "latest-only runs",
    "BranchPythonOperator": "branching",
    "BranchDateTimeOperator": "branching",
    "BranchDayOfWeekOperator": "branching",
    "ShortCircuitOperator": "short-circuiting",
    "PokeReturnValue": "sensors",
    "CronTriggerTimetable": "timetables",
    "CronDataIntervalTimetable": "timetables",
    "DeltaTriggerTimetable": "timetables",
    "MultipleCronTriggerTimetable": "timetables",
    "EventsTimetable": "timetables",
    "Timetable": "custom timetables",
    "CronPartitionTimetable": "partitioned assets",
    "PartitionedAssetTimetable": "partitioned assets",
    "PartitionedAtRuntime": "partitioned assets",
    "AssetOrTimeSchedule": "timetables",
    "SQLExecuteQueryOperator": "SQL operators",
    "EmailOperator": "email",
    "send_email": "email",
    "conf": "Airflow configuration (airflow.cfg)",
}
"""An Airflow name a file uses → the feature it relies on (what ``dags check`` lists)."""

CALL_FEATURES: dict[str, str] = {
    "expand": "dynamic task mapping",
    "expand_kwargs": "dynamic task mapping",
    "partial": "dynamic task mapping",
    "branch": "branching",
    "short_circuit": "short-circuiting",
    "sensor": "sensors",
    "bash": "@task.bash",
    "docker": "container tasks",
    "kubernetes": "container tasks",
}
"""A method or decorator attribute a file uses (``x.expand(...)``, ``@task.branch``) → feature."""
