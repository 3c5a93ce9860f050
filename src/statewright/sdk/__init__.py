"""The authoring SDK: what a DAG file imports.

Exports ``DAG`` and ``@dag``; ``@task`` (with ``.branch``, ``.short_circuit``, ``.bash``);
``@setup`` and ``@teardown`` (setup and teardown tasks, as ``airflow.sdk.setup`` / ``teardown``);
``BaseOperator``, ``BaseBranchOperator`` and the built-in operators; ``chain`` and
``cross_downstream``; ``XComArg``; the exceptions a task raises to skip or fail
(``SkipTask``/``AirflowSkipException``, ``FailTask``/``AirflowFailException``, ``TaskTimeout``);
``TriggerRule``; ``get_current_context``; ``Param``, ``ParamsDict`` and ``ParamValidationError``
(params with a JSON Schema); ``macros`` (Airflow's template macros) and ``literal`` (a value
a template field passes on unrendered); ``TaskGroup`` and ``@task_group``; ``Label`` (edge
labels); ``PokeReturnValue`` (what a sensor's poke, or ``@task.sensor``, may return);
``BaseHook``, ``Connection``, ``Variable`` and ``mask_secret`` (connections, variables and
secrets); assets (``Asset``, ``AssetAlias``, ``AssetAll``, ``AssetAny``,
``AssetOrTimeSchedule``, ``AssetWatcher``, ``@asset``). Running a task lives in
``statewright.sdk.runtime``, importing DAG files in ``statewright.sdk.loader``.
"""

from __future__ import annotations

from statewright.core.trigger_rules import TriggerRule
from statewright.sdk import macros
from statewright.sdk.asset_decorator import asset
from statewright.sdk.assets import (
    Asset,
    AssetAlias,
    AssetAll,
    AssetAny,
    AssetOrTimeSchedule,
    AssetWatcher,
)
from statewright.sdk.basehook import BaseHook
from statewright.sdk.baseoperator import BaseOperator, chain, cross_downstream
from statewright.sdk.branch import BaseBranchOperator
from statewright.sdk.connection import Connection
from statewright.sdk.context import Context, get_current_context
from statewright.sdk.dag import DAG, dag
from statewright.sdk.decorators import setup, task, teardown
from statewright.sdk.edges import EdgeModifier, Label
from statewright.sdk.exceptions import (
    AirflowFailException,
    AirflowSkipException,
    FailTask,
    SkipTask,
    TaskTimeout,
)
from statewright.sdk.masking import mask_secret
from statewright.sdk.operators import (
    BashOperator,
    BranchPythonOperator,
    EmptyOperator,
    PythonOperator,
    ShortCircuitOperator,
)
from statewright.sdk.params import Param, ParamsDict, ParamValidationError
from statewright.sdk.sensors.base import PokeReturnValue
from statewright.sdk.taskgroup import TaskGroup, task_group
from statewright.sdk.templating import literal
from statewright.sdk.variables import Variable
from statewright.sdk.xcom_arg import XComArg

__all__ = [
    "DAG",
    "AirflowFailException",
    "AirflowSkipException",
    "Asset",
    "AssetAlias",
    "AssetAll",
    "AssetAny",
    "AssetOrTimeSchedule",
    "AssetWatcher",
    "BaseBranchOperator",
    "BaseHook",
    "BaseOperator",
    "BashOperator",
    "BranchPythonOperator",
    "Connection",
    "Context",
    "EdgeModifier",
    "EmptyOperator",
    "FailTask",
    "Label",
    "Param",
    "ParamValidationError",
    "ParamsDict",
    "PokeReturnValue",
    "PythonOperator",
    "ShortCircuitOperator",
    "SkipTask",
    "TaskGroup",
    "TaskTimeout",
    "TriggerRule",
    "Variable",
    "XComArg",
    "asset",
    "chain",
    "cross_downstream",
    "dag",
    "get_current_context",
    "literal",
    "macros",
    "mask_secret",
    "setup",
    "task",
    "task_group",
    "teardown",
]
